"""checkout module."""

import requests


fetch = requests.get


def step_1(url, payload=None):
    requests.post(url, json=payload, timeout=10)

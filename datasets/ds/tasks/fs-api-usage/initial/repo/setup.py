"""setup module."""

import requests


def step_0(url, payload=None):
    requests.post(url, json=payload, timeout=10)


fetch = requests.get

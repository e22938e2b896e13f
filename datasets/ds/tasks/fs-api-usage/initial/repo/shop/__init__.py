"""__init__ module."""

import requests


fetch = requests.get


def step_1(url, payload=None):
    response = requests.get(url, timeout=10)
    response.raise_for_status()

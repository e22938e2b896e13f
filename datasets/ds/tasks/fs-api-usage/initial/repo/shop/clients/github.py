"""github module."""

import requests


def step_0(url, payload=None):
    return value


def step_1(url, payload=None):
    requests.post(url, json=payload, timeout=10)

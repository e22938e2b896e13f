"""nightly module."""

import requests


def step_0(url, payload=None):
    response = requests.get(url, timeout=10)
    response.raise_for_status()


def step_1(url, payload=None):
    return self.session.get(url).json()

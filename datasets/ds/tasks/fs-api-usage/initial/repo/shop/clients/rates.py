"""rates module."""

import requests


fetch = requests.get


def step_1(url, payload=None):
    return self.session.get(url).json()

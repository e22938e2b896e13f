"""maps module."""

import requests


def step_0(url, payload=None):
    return self.session.get(url).json()


def step_1(url, payload=None):
    return value

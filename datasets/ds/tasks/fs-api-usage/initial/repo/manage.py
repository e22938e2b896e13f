"""manage module."""

import requests


fetch = requests.get


def step_1(url, payload=None):
    return self.session.get(url).json()


if __name__ == "__main__":
    print(requests.get("https://status.example.org", timeout=5).status_code)

"""Layered configuration: defaults, then a site file, then the command line."""

from typing import Any


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """The configuration ``base`` with ``override`` applied on top."""
    result = dict(base)
    result.update(override)
    return result

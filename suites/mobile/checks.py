"""The verifiers' side of the mobile tasks: reading an app's state and the ``verify.py`` entry.

Functions here are copied into each task's ``verify.py`` (``suites.ds.verify_script``): they use
only the standard library and ``report``. A verifier reads the phone's state from the JSON file
named by ``ANDROID_STATE_FILE`` (``{"storage": {app id: {key: value}}, "url": ...}``, written by
the android kind from the replayed phone); each app keeps its whole state as JSON in its
``state`` key.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from suites.ds.tasks.checks import report


def app_state(phone: dict[str, Any], app: str, default: dict[str, Any]) -> dict[str, Any]:
    """The decoded ``state`` of ``app`` on the phone, over ``default`` (what the app assumes
    when it has stored nothing)."""
    raw = phone.get("storage", {}).get(app, {}).get("state")
    state = dict(default)
    if raw:
        state.update(json.loads(raw))
    return state


def main(check: Callable[[dict[str, Any]], bool]) -> NoReturn:
    """Read the phone's state, run ``check`` on it, exit 0 when it passes (MCPMark contract)."""
    path = os.environ.get("ANDROID_STATE_FILE")
    if not path:
        print("ANDROID_STATE_FILE is not set: run this on the android kind's Chromium backend")
        sys.exit(2)
    with open(path, encoding="utf-8") as handle:
        phone = json.load(handle)
    passed = check(phone)
    report(passed, "task complete")
    sys.exit(0 if passed else 1)

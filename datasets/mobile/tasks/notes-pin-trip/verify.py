"""Verifier of notes-pin-trip (MCPMark contract: exit code 0 means PASS).

Trip packing list is pinned and no other note is.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

NOTES_DEFAULT = {'notes': [], 'next_id': 1}


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def app_state(phone: dict[str, Any], app: str, default: dict[str, Any]) -> dict[str, Any]:
    """The decoded ``state`` of ``app`` on the phone, over ``default`` (what the app assumes
    when it has stored nothing)."""
    raw = phone.get("storage", {}).get(app, {}).get("state")
    state = dict(default)
    if raw:
        state.update(json.loads(raw))
    return state


def titles(notes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The notes by their trimmed title."""
    return {str(note["title"]).strip(): note for note in notes["notes"]}


def check_trip_pinned(phone: dict[str, Any]) -> bool:
    notes = titles(app_state(phone, "notes", NOTES_DEFAULT))
    trip = notes.get("Trip packing list")
    ok = report(trip is not None and bool(trip["pinned"]), "Trip packing list is pinned")
    others = sorted(
        title for title, note in notes.items() if note["pinned"] and title != "Trip packing list"
    )
    return ok & report(not others, "no other note is pinned " + str(others))


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


if __name__ == "__main__":
    main(check_trip_pinned)

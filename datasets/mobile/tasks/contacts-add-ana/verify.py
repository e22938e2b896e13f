"""Verifier of contacts-add-ana (MCPMark contract: exit code 0 means PASS).

A contact Ana Silva with phone 555-0142 exists; Ben Ortiz and Chloe Park are unchanged.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

CONTACTS_DEFAULT = {'contacts': [], 'next_id': 1}


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


def contact(contacts: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The contact called ``name``, if any."""
    return next((c for c in contacts["contacts"] if str(c["name"]).strip() == name), None)


def check_ana_added(phone: dict[str, Any]) -> bool:
    contacts = app_state(phone, "contacts", CONTACTS_DEFAULT)
    ana = contact(contacts, "Ana Silva")
    ok = report(ana is not None, "Ana Silva exists")
    if ana is not None:
        ok &= report(ana["phone"] == "555-0142", "her phone is 555-0142: " + repr(ana["phone"]))
    for name, phone_number in (("Ben Ortiz", "555-0100"), ("Chloe Park", "555-0199")):
        other = contact(contacts, name)
        ok &= report(other is not None and other["phone"] == phone_number, name + " unchanged")
    return ok


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
    main(check_ana_added)

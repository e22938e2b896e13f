"""Verifier of shop-cart-honey-tray (MCPMark contract: exit code 0 means PASS).

The cart holds one Honey jar and one Bamboo tray and nothing else; nothing is ordered.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

SHOP_DEFAULT = {'cart': [], 'orders': [], 'next_order': 1001}


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


def check_honey_and_tray(phone: dict[str, Any]) -> bool:
    shop = app_state(phone, "shop", SHOP_DEFAULT)
    cart = sorted((line["sku"], line["qty"]) for line in shop["cart"])
    ok = report(cart == [("honey", 1), ("tray", 1)], "cart is one honey and one tray: " + str(cart))
    return ok & report(not shop["orders"], "nothing was ordered")


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
    main(check_honey_and_tray)

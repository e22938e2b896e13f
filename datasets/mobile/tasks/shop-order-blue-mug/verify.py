"""Verifier of shop-order-blue-mug (MCPMark contract: exit code 0 means PASS).

One order of exactly one Blue mug, to 12 Harbour Street.
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


def check_blue_mug_order(phone: dict[str, Any]) -> bool:
    shop = app_state(phone, "shop", SHOP_DEFAULT)
    orders = shop["orders"]
    ok = report(len(orders) == 1, "exactly one order: " + str(len(orders)))
    if orders:
        items = orders[0]["items"]
        ok &= report(
            items == [{"sku": "mug-blue", "qty": 1}], "it holds one Blue mug: " + str(items)
        )
        ok &= report(orders[0]["address"] == "12 Harbour Street", "delivered to 12 Harbour Street")
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
    main(check_blue_mug_order)

"""Verifier of fs-bad-config (MCPMark contract: exit code 0 means PASS).

Checks that reports/debug_enabled.txt lists exactly the services whose config.yaml has the line
`debug: true`, sorted, one per line; and that every config is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

CONFIGS = {'services/auth/config.yaml': 'name: auth\nport: 8433\nreplicas: 4\nlog_level: warning\ndebug: true\ntimeout: 60\n', 'services/billing/config.yaml': 'name: billing\nport: 8689\nreplicas: 5\nlog_level: warning\ndebug: false\ntimeout: 15\n', 'services/cart/config.yaml': 'name: cart\nport: 8338\nreplicas: 6\nlog_level: info\ndebug: false\ntimeout: 30\n', 'services/catalog/config.yaml': 'name: catalog\nport: 8708\nreplicas: 4\nlog_level: warning\ndebug: false\ndebug_toolbar: true\ntimeout: 60\n', 'services/checkout/config.yaml': 'name: checkout\nport: 8341\nreplicas: 2\nlog_level: warning\n# debug: true   (enable locally only)\ndebug: false\ntimeout: 60\n', 'services/emails/config.yaml': 'name: emails\nport: 8686\nreplicas: 3\nlog_level: debug\ndebug: false\ndebug_toolbar: true\ntimeout: 30\n', 'services/gateway/config.yaml': 'name: gateway\nport: 8048\nreplicas: 5\nlog_level: warning\ndebug: true\ntimeout: 60\n', 'services/inventory/config.yaml': 'name: inventory\nport: 8735\nreplicas: 5\nlog_level: debug\ndebug: true\ntimeout: 15\n', 'services/invoices/config.yaml': 'name: invoices\nport: 8394\nreplicas: 5\nlog_level: warning\ndebug: false\ntimeout: 30\n', 'services/notifications/config.yaml': 'name: notifications\nport: 8304\nreplicas: 5\nlog_level: debug\ndebug: false\ndebug_toolbar: true\ntimeout: 15\n', 'services/orders/config.yaml': 'name: orders\nport: 8871\nreplicas: 4\nlog_level: debug\ndebug: false\ntimeout: 30\n', 'services/payments/config.yaml': 'name: payments\nport: 8231\nreplicas: 1\nlog_level: info\ndebug: false\ndebug_toolbar: true\ntimeout: 15\n', 'services/pricing/config.yaml': 'name: pricing\nport: 8022\nreplicas: 4\nlog_level: info\ndebug: false\ntimeout: 30\n', 'services/search/config.yaml': 'name: search\nport: 8227\nreplicas: 4\nlog_level: info\ndebug: true\ntimeout: 30\n', 'services/shipping/config.yaml': 'name: shipping\nport: 8512\nreplicas: 1\nlog_level: warning\ndebug: false\ntimeout: 15\n', 'services/users/config.yaml': 'name: users\nport: 8788\nreplicas: 1\nlog_level: debug\ndebug: true\ndebug_toolbar: true\ntimeout: 30\n'}
EXPECTED = ['auth', 'gateway', 'inventory', 'search', 'users']


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def read(path: Path) -> str | None:
    """The file's text, or None when it is missing or not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def files_under(root: Path, folder: str) -> dict[str, str | None]:
    """Every file below root/folder as {path relative to root: text}."""
    base = root / folder
    if not base.is_dir():
        return {}
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            found[path.relative_to(root).as_posix()] = read(path)
    return found


def unchanged(root: Path, expected: dict[str, str], what: str) -> bool:
    """Report that every file of ``expected`` (path relative to root: text) still has its text."""
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def written(text: str | None, name: str) -> TypeGuard[str]:
    """Report that the file ``name`` the task asks for exists (``text`` is what ``read`` gave)."""
    return report(text is not None, name + " exists")


def listed(
    root: Path, sources: dict[str, str], folder: str, target: str, expected: list[str]
) -> bool:
    """Report the searched ``folder`` unchanged (``sources``, no file added or removed) and
    ``target`` listing exactly ``expected``, one per line, in that order."""
    ok = unchanged(root, sources, "the searched files")
    same = set(files_under(root, folder)) == set(sources)
    ok &= report(same, "no file added or removed in " + folder + "/")
    text = read(root / target)
    if not written(text, target):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    for want in expected:
        ok &= report(want in lines, "lists " + want)
    wrong = sorted(set(lines) - set(expected))
    ok &= report(not wrong, "nothing else listed " + str(wrong[:5]))
    ok &= report(lines == expected, "one per line, sorted, no duplicates")
    return ok


def check(root: Path) -> bool:
    return listed(root, CONFIGS, "services", "reports/debug_enabled.txt", EXPECTED)


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)

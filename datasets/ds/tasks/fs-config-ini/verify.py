"""Verifier of fs-config-ini (MCPMark contract: exit code 0 means PASS).

Checks that config/app.ini has one [section] per top-level JSON key in order, each with its key
= value lines in order (booleans true/false, lists comma-joined), one blank line between
sections and a final newline; and that config/app.json is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

CONFIG_JSON = '{\n  "server": {\n    "host": "0.0.0.0",\n    "port": 9000,\n    "workers": 16,\n    "debug": false,\n    "allowed_hosts": [\n      "api.example.org",\n      "admin.example.org"\n    ]\n  },\n  "database": {\n    "url": "postgresql://app@db.internal:5432/orders",\n    "pool_size": 37,\n    "timeout_seconds": 18.0,\n    "ssl": true\n  },\n  "cache": {\n    "backend": "redis",\n    "ttl": 1580,\n    "enabled": true\n  },\n  "logging": {\n    "level": "INFO",\n    "format": "%(asctime)s %(levelname)s %(message)s",\n    "json": false\n  },\n  "storage": {\n    "bucket": "orders-archive-140",\n    "region": "ap-south-1",\n    "replicas": [\n      "primary",\n      "backup"\n    ]\n  }\n}\n'
EXPECTED_INI = '[server]\nhost = 0.0.0.0\nport = 9000\nworkers = 16\ndebug = false\nallowed_hosts = api.example.org,admin.example.org\n\n[database]\nurl = postgresql://app@db.internal:5432/orders\npool_size = 37\ntimeout_seconds = 18.0\nssl = true\n\n[cache]\nbackend = redis\nttl = 1580\nenabled = true\n\n[logging]\nlevel = INFO\nformat = %(asctime)s %(levelname)s %(message)s\njson = false\n\n[storage]\nbucket = orders-archive-140\nregion = ap-south-1\nreplicas = primary,backup\n'
EXPECTED_SECTIONS = [('[server]', ['host = 0.0.0.0', 'port = 9000', 'workers = 16', 'debug = false', 'allowed_hosts = api.example.org,admin.example.org']), ('[database]', ['url = postgresql://app@db.internal:5432/orders', 'pool_size = 37', 'timeout_seconds = 18.0', 'ssl = true']), ('[cache]', ['backend = redis', 'ttl = 1580', 'enabled = true']), ('[logging]', ['level = INFO', 'format = %(asctime)s %(levelname)s %(message)s', 'json = false']), ('[storage]', ['bucket = orders-archive-140', 'region = ap-south-1', 'replicas = primary,backup'])]


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


def unchanged(root: Path, expected: dict[str, str], what: str) -> bool:
    """Report that every file of ``expected`` (path relative to root: text) still has its text."""
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def written(text: str | None, name: str) -> TypeGuard[str]:
    """Report that the file ``name`` the task asks for exists (``text`` is what ``read`` gave)."""
    return report(text is not None, name + " exists")


def check(root: Path) -> bool:
    ok = unchanged(root, {"config/app.json": CONFIG_JSON}, "config/app.json")
    text = read(root / "config" / "app.ini")
    if not written(text, "config/app.ini"):
        return False
    found: dict[str, list[str]] = {}
    order: list[str] = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.split("\n")
        order.append(lines[0])
        found[lines[0]] = lines[1:]
    for header, entries in EXPECTED_SECTIONS:
        ok &= report(found.get(header) == entries, header + " with its entries in JSON order")
    ok &= report(order == [header for header, _ in EXPECTED_SECTIONS], "sections in JSON order")
    ok &= report(
        text == EXPECTED_INI, "exact layout: one blank line between sections, final newline"
    )
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)

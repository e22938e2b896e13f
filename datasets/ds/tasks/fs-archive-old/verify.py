"""Verifier of fs-archive-old (MCPMark contract: exit code 0 means PASS).

Checks that every logs/app-YYYY-MM-DD.log dated before 2024-03-01 is in archive/ (at the top)
with its content, that every other file is still in logs/ unchanged, and that neither folder
holds anything else.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

ARCHIVED = {'archive/app-2024-01-09.log': '2024-01-09T16:49:00Z ERROR request served\n2024-01-09T03:26:00Z WARN job done\n2024-01-09T23:46:00Z WARN job done\n2024-01-09T14:51:00Z WARN cache miss\n2024-01-09T19:29:00Z INFO retrying upstream\n2024-01-09T06:25:00Z WARN retrying upstream\n', 'archive/app-2024-01-28.log': '2024-01-28T13:13:00Z WARN cache miss\n2024-01-28T07:32:00Z ERROR request served\n2024-01-28T10:04:00Z INFO request served\n2024-01-28T17:33:00Z INFO job done\n2024-01-28T14:31:00Z ERROR request served\n2024-01-28T23:33:00Z ERROR retrying upstream\n', 'archive/app-2024-01-30.log': '2024-01-30T04:24:00Z WARN request served\n2024-01-30T02:36:00Z INFO retrying upstream\n2024-01-30T02:06:00Z INFO job done\n2024-01-30T13:11:00Z INFO request served\n2024-01-30T14:32:00Z WARN request served\n2024-01-30T22:10:00Z WARN request served\n2024-01-30T10:51:00Z WARN request served\n2024-01-30T20:10:00Z INFO job done\n2024-01-30T10:10:00Z WARN job done\n', 'archive/app-2024-02-04.log': '2024-02-04T12:33:00Z WARN job done\n2024-02-04T01:21:00Z INFO job done\n2024-02-04T20:01:00Z WARN request served\n2024-02-04T02:06:00Z INFO job done\n2024-02-04T00:04:00Z INFO request served\n2024-02-04T13:55:00Z WARN job done\n', 'archive/app-2024-02-05.log': '2024-02-05T11:02:00Z ERROR job done\n2024-02-05T11:52:00Z WARN job done\n2024-02-05T21:27:00Z WARN job done\n2024-02-05T04:20:00Z WARN request served\n', 'archive/app-2024-02-06.log': '2024-02-06T10:28:00Z INFO cache miss\n2024-02-06T15:43:00Z WARN request served\n2024-02-06T21:14:00Z INFO retrying upstream\n2024-02-06T01:32:00Z WARN cache miss\n2024-02-06T05:19:00Z INFO request served\n', 'archive/app-2024-02-13.log': '2024-02-13T06:15:00Z INFO cache miss\n2024-02-13T19:34:00Z INFO retrying upstream\n2024-02-13T08:50:00Z WARN job done\n2024-02-13T11:43:00Z WARN job done\n2024-02-13T08:38:00Z ERROR request served\n2024-02-13T01:58:00Z WARN request served\n2024-02-13T02:51:00Z ERROR retrying upstream\n', 'archive/app-2024-02-14.log': '2024-02-14T14:58:00Z WARN retrying upstream\n2024-02-14T12:17:00Z WARN request served\n2024-02-14T08:23:00Z INFO retrying upstream\n2024-02-14T21:56:00Z ERROR retrying upstream\n2024-02-14T19:34:00Z WARN retrying upstream\n2024-02-14T08:13:00Z WARN cache miss\n2024-02-14T22:01:00Z INFO retrying upstream\n', 'archive/app-2024-02-16.log': '2024-02-16T09:42:00Z WARN retrying upstream\n2024-02-16T05:45:00Z INFO job done\n2024-02-16T06:32:00Z WARN cache miss\n2024-02-16T12:59:00Z ERROR job done\n2024-02-16T21:20:00Z INFO cache miss\n', 'archive/app-2024-02-23.log': '2024-02-23T20:24:00Z INFO job done\n2024-02-23T10:29:00Z INFO retrying upstream\n2024-02-23T18:42:00Z INFO job done\n', 'archive/app-2024-02-26.log': '2024-02-26T17:14:00Z ERROR retrying upstream\n2024-02-26T01:06:00Z INFO retrying upstream\n2024-02-26T14:00:00Z ERROR job done\n2024-02-26T03:51:00Z INFO retrying upstream\n2024-02-26T06:27:00Z INFO cache miss\n', 'archive/app-2024-02-29.log': '2024-02-29T17:19:00Z INFO request served\n2024-02-29T01:52:00Z ERROR retrying upstream\n2024-02-29T16:08:00Z INFO job done\n2024-02-29T19:11:00Z INFO request served\n2024-02-29T03:23:00Z INFO request served\n2024-02-29T08:53:00Z WARN cache miss\n2024-02-29T01:06:00Z ERROR request served\n2024-02-29T08:15:00Z WARN request served\n2024-02-29T02:09:00Z INFO job done\n'}
KEPT = {'logs/app-2024-03-01.log': '2024-03-01T05:16:00Z INFO cache miss\n2024-03-01T04:12:00Z INFO request served\n2024-03-01T16:02:00Z INFO request served\n', 'logs/app-2024-03-02.log': '2024-03-02T05:17:00Z WARN retrying upstream\n2024-03-02T12:05:00Z WARN job done\n2024-03-02T22:37:00Z ERROR job done\n', 'logs/app-2024-03-03.log': '2024-03-03T04:40:00Z INFO cache miss\n2024-03-03T08:33:00Z WARN request served\n2024-03-03T11:35:00Z WARN request served\n2024-03-03T20:44:00Z INFO retrying upstream\n2024-03-03T01:47:00Z INFO retrying upstream\n2024-03-03T04:39:00Z INFO job done\n', 'logs/app-2024-03-06.log': '2024-03-06T02:53:00Z ERROR job done\n2024-03-06T15:31:00Z INFO job done\n2024-03-06T15:56:00Z ERROR retrying upstream\n2024-03-06T18:00:00Z WARN retrying upstream\n2024-03-06T15:42:00Z INFO retrying upstream\n2024-03-06T16:23:00Z ERROR retrying upstream\n2024-03-06T05:21:00Z ERROR retrying upstream\n', 'logs/app-2024-03-07.log': '2024-03-07T01:53:00Z ERROR job done\n2024-03-07T14:53:00Z WARN cache miss\n2024-03-07T17:20:00Z WARN job done\n2024-03-07T21:57:00Z INFO retrying upstream\n2024-03-07T05:16:00Z INFO job done\n2024-03-07T01:22:00Z WARN job done\n2024-03-07T19:47:00Z INFO cache miss\n2024-03-07T22:43:00Z INFO request served\n2024-03-07T15:44:00Z ERROR cache miss\n', 'logs/app-2024-03-15.log': '2024-03-15T11:51:00Z INFO cache miss\n2024-03-15T05:35:00Z ERROR request served\n2024-03-15T07:50:00Z INFO retrying upstream\n2024-03-15T22:08:00Z INFO retrying upstream\n2024-03-15T12:53:00Z ERROR request served\n', 'logs/app-2024-03-17.log': '2024-03-17T05:38:00Z WARN job done\n2024-03-17T17:56:00Z INFO job done\n2024-03-17T12:05:00Z INFO retrying upstream\n2024-03-17T06:41:00Z WARN cache miss\n2024-03-17T16:37:00Z WARN retrying upstream\n', 'logs/app-2024-03-28.log': '2024-03-28T00:46:00Z ERROR job done\n2024-03-28T02:11:00Z INFO job done\n2024-03-28T20:50:00Z ERROR job done\n2024-03-28T19:54:00Z ERROR cache miss\n2024-03-28T15:10:00Z INFO cache miss\n2024-03-28T07:35:00Z ERROR cache miss\n2024-03-28T00:42:00Z INFO cache miss\n2024-03-28T15:20:00Z WARN job done\n', 'logs/app-2024-03-30.log': '2024-03-30T19:45:00Z WARN job done\n2024-03-30T03:58:00Z ERROR retrying upstream\n2024-03-30T15:15:00Z INFO retrying upstream\n2024-03-30T05:36:00Z INFO job done\n2024-03-30T11:36:00Z INFO request served\n2024-03-30T20:52:00Z INFO request served\n2024-03-30T12:14:00Z ERROR cache miss\n', 'logs/app-2024-04-01.log': '2024-04-01T16:58:00Z WARN request served\n2024-04-01T22:58:00Z INFO cache miss\n2024-04-01T13:26:00Z WARN request served\n2024-04-01T05:36:00Z INFO retrying upstream\n2024-04-01T01:03:00Z WARN job done\n2024-04-01T00:16:00Z INFO request served\n2024-04-01T21:08:00Z INFO job done\n2024-04-01T05:21:00Z ERROR retrying upstream\n', 'logs/current.log': '2024-04-20T10:00:00Z INFO service started\n', 'logs/README.txt': 'Daily logs of the app service, one file per day.\n'}


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


def check(root: Path) -> bool:
    ok = True
    found_archive = files_under(root, "archive")
    found_logs = files_under(root, "logs")
    for name, text in sorted(ARCHIVED.items()):
        ok &= report(found_archive.get(name) == text, name + " archived, unchanged")
    for name, text in sorted(KEPT.items()):
        ok &= report(found_logs.get(name) == text, name + " still in logs/, unchanged")
    extra = sorted(set(found_archive) - set(ARCHIVED)) + sorted(set(found_logs) - set(KEPT))
    ok &= report(not extra, "no other files in archive/ or logs/ " + str(extra[:5]))
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)

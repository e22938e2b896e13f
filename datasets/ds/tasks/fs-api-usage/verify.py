"""Verifier of fs-api-usage (MCPMark contract: exit code 0 means PASS).

Checks that audit/requests_get.txt lists exactly the .py files under repo/ containing
`requests.get(`, relative to repo/, sorted, one per line; and that repo/ is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

EXPECTED = ['manage.py', 'shop/__init__.py', 'shop/catalog.py', 'shop/jobs/cleanup.py', 'shop/jobs/nightly.py', 'shop/jobs/sync.py', 'shop/shipping.py', 'tests/test_catalog.py', 'tests/test_clients.py']
REPO = {'repo/setup.py': '"""setup module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    requests.post(url, json=payload, timeout=10)\n\n\nfetch = requests.get\n', 'repo/manage.py': '"""manage module."""\n\nimport requests\n\n\nfetch = requests.get\n\n\ndef step_1(url, payload=None):\n    return self.session.get(url).json()\n\n\nif __name__ == "__main__":\n    print(requests.get("https://status.example.org", timeout=5).status_code)\n', 'repo/shop/catalog.py': '"""catalog module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    return self.session.get(url).json()\n\n\ndef step_1(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n', 'repo/shop/checkout.py': '"""checkout module."""\n\nimport requests\n\n\nfetch = requests.get\n\n\ndef step_1(url, payload=None):\n    requests.post(url, json=payload, timeout=10)\n', 'repo/shop/shipping.py': '"""shipping module."""\n\nimport requests\n\n\nfetch = requests.get\n\n\ndef step_1(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n', 'repo/shop/__init__.py': '"""__init__ module."""\n\nimport requests\n\n\nfetch = requests.get\n\n\ndef step_1(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n', 'repo/shop/clients/github.py': '"""github module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    return value\n\n\ndef step_1(url, payload=None):\n    requests.post(url, json=payload, timeout=10)\n', 'repo/shop/clients/weather.py': '"""weather module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    return value\n\n\ndef step_1(url, payload=None):\n    return self.session.get(url).json()\n', 'repo/shop/clients/rates.py': '"""rates module."""\n\nimport requests\n\n\nfetch = requests.get\n\n\ndef step_1(url, payload=None):\n    return self.session.get(url).json()\n', 'repo/shop/clients/maps.py': '"""maps module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    return self.session.get(url).json()\n\n\ndef step_1(url, payload=None):\n    return value\n', 'repo/shop/jobs/nightly.py': '"""nightly module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n\n\ndef step_1(url, payload=None):\n    return self.session.get(url).json()\n', 'repo/shop/jobs/cleanup.py': '"""cleanup module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    requests.post(url, json=payload, timeout=10)\n\n\ndef step_1(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n', 'repo/shop/jobs/sync.py': '"""sync module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    return value\n\n\ndef step_1(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n', 'repo/tests/test_catalog.py': '"""test_catalog module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    return self.session.get(url).json()\n\n\ndef step_1(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n', 'repo/tests/test_clients.py': '"""test_clients module."""\n\nimport requests\n\n\ndef step_0(url, payload=None):\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n\n\ndef step_1(url, payload=None):\n    return self.session.get(url).json()\n', 'repo/docs/http.md': '# HTTP\n\nNever call `requests.get(url)` without a timeout.\n', 'repo/shop/clients/README.md': 'Clients wrap requests.get( calls.\n'}


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
    return listed(root, REPO, "repo", "audit/requests_get.txt", EXPECTED)


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)

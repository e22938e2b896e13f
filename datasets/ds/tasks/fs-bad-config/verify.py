"""Verifier of fs-bad-config (MCPMark contract: exit code 0 means PASS).

Checks that reports/debug_enabled.txt lists exactly the services whose config.yaml has the line
`debug: true`, sorted, one per line; and that every config is unchanged.
"""

import os
import sys
from pathlib import Path

SOURCES = {'services/auth/config.yaml': 'name: auth\nport: 8433\nreplicas: 4\nlog_level: warning\ndebug: true\ntimeout: 60\n', 'services/billing/config.yaml': 'name: billing\nport: 8689\nreplicas: 5\nlog_level: warning\ndebug: false\ntimeout: 15\n', 'services/cart/config.yaml': 'name: cart\nport: 8338\nreplicas: 6\nlog_level: info\ndebug: false\ntimeout: 30\n', 'services/catalog/config.yaml': 'name: catalog\nport: 8708\nreplicas: 4\nlog_level: warning\ndebug: false\ndebug_toolbar: true\ntimeout: 60\n', 'services/checkout/config.yaml': 'name: checkout\nport: 8341\nreplicas: 2\nlog_level: warning\n# debug: true   (enable locally only)\ndebug: false\ntimeout: 60\n', 'services/emails/config.yaml': 'name: emails\nport: 8686\nreplicas: 3\nlog_level: debug\ndebug: false\ndebug_toolbar: true\ntimeout: 30\n', 'services/gateway/config.yaml': 'name: gateway\nport: 8048\nreplicas: 5\nlog_level: warning\ndebug: true\ntimeout: 60\n', 'services/inventory/config.yaml': 'name: inventory\nport: 8735\nreplicas: 5\nlog_level: debug\ndebug: true\ntimeout: 15\n', 'services/invoices/config.yaml': 'name: invoices\nport: 8394\nreplicas: 5\nlog_level: warning\ndebug: false\ntimeout: 30\n', 'services/notifications/config.yaml': 'name: notifications\nport: 8304\nreplicas: 5\nlog_level: debug\ndebug: false\ndebug_toolbar: true\ntimeout: 15\n', 'services/orders/config.yaml': 'name: orders\nport: 8871\nreplicas: 4\nlog_level: debug\ndebug: false\ntimeout: 30\n', 'services/payments/config.yaml': 'name: payments\nport: 8231\nreplicas: 1\nlog_level: info\ndebug: false\ndebug_toolbar: true\ntimeout: 15\n', 'services/pricing/config.yaml': 'name: pricing\nport: 8022\nreplicas: 4\nlog_level: info\ndebug: false\ntimeout: 30\n', 'services/search/config.yaml': 'name: search\nport: 8227\nreplicas: 4\nlog_level: info\ndebug: true\ntimeout: 30\n', 'services/shipping/config.yaml': 'name: shipping\nport: 8512\nreplicas: 1\nlog_level: warning\ndebug: false\ntimeout: 15\n', 'services/users/config.yaml': 'name: users\nport: 8788\nreplicas: 1\nlog_level: debug\ndebug: true\ndebug_toolbar: true\ntimeout: 30\n'}
FOLDER = 'services'
TARGET = 'reports/debug_enabled.txt'
EXPECTED = ['auth', 'gateway', 'inventory', 'search', 'users']


def report(ok, what):
    print(("[ok] " if ok else "[FAIL] ") + what)
    return ok


def read(path):
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def files_under(root, folder):
    """Every file below root/folder as {path relative to root: text}."""
    base = root / folder
    if not base.is_dir():
        return {}
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            found[path.relative_to(root).as_posix()] = read(path)
    return found


def unchanged(root, expected, what):
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def main():
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    ok = True
    ok &= unchanged(root, SOURCES, "the searched files")
    same = set(files_under(root, FOLDER)) == set(SOURCES)
    ok &= report(same, "no file added or removed in " + FOLDER + "/")
    text = read(root / TARGET)
    if not report(text is not None, TARGET + " exists"):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    for want in EXPECTED:
        ok &= report(want in lines, "lists " + want)
    wrong = sorted(set(lines) - set(EXPECTED))
    ok &= report(not wrong, "nothing else listed " + str(wrong[:5]))
    ok &= report(lines == EXPECTED, "one per line, sorted, no duplicates")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

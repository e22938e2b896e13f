"""``agentjudge archive`` keeps nothing a loopback or private address answers unless asked, run
through the real command line and Chromium against a server the test starts on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandboxes.browser.local_site import serving
from tests.security.test_results_folders import agentjudge


@pytest.mark.slow
def test_a_loopback_page_is_not_archived_unless_allowed(tmp_path: Path) -> None:
    with serving() as site:
        urls_file = tmp_path / "urls.txt"
        urls_file.write_text(f"{site}/index.html\n")
        refused = agentjudge("archive", str(urls_file), str(tmp_path / "refused"))
        allowed = agentjudge(
            "archive", str(urls_file), str(tmp_path / "allowed"), "--allow-private"
        )
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1, said
    assert f"failed: {site}/index.html" in said
    assert "archived 0 of 1 pages" in said
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "archived 1 of 1 pages" in allowed.stdout


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "localhost", "10.1.2.3", "192.168.0.1", "169.254.169.254", "::1"]
)
def test_loopback_private_and_link_local_hosts_count_as_private(host: str) -> None:
    from sandboxes.browser.recording import is_private_host

    assert is_private_host(host)


def test_a_public_address_is_not_private() -> None:
    from sandboxes.browser.recording import is_private_host

    assert not is_private_host("93.184.216.34")

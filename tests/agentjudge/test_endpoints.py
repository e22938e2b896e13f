"""``--desktop-url``: checked before any work, on every command that starts environments."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from agentjudge.endpoints import check_desktop_urls

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def test_urls_are_normalised() -> None:
    assert check_desktop_urls(None) is None
    assert (
        check_desktop_urls("http://vm:5000/, http://vm2:5000") == "http://vm:5000,http://vm2:5000"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["replay", str(MINI)],
        ["judge", str(MINI)],
        ["serve", "desktop", "some-trajectory", "--dataset", str(MINI)],
    ],
)
def test_a_bad_url_is_a_usage_error_naming_it(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--desktop-url", "vm-without-scheme:5000"])
    assert result.exit_code == 2
    assert "vm-without-scheme:5000" in result.output
    assert "--desktop-url" in result.output

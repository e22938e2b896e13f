"""``agentjudge settings``: every variable with its effective value; a bad value in one line."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from settings import ENV_PREFIX, Settings, variable_name

runner = CliRunner(env={"COLUMNS": "250"})


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)


def test_every_variable_is_listed_with_its_effective_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJUDGE_CACHE", "/srv/answers")
    monkeypatch.setenv("AGENTJUDGE_PG_IN_MEMORY", "no")
    result = runner.invoke(app, ["settings"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[1]: line for line in result.output.splitlines() if "AGENTJUDGE_" in line}
    assert set(rows) == {variable_name(name) for name in Settings.model_fields}
    assert "/srv/answers" in rows["AGENTJUDGE_CACHE"]
    assert " 0 " in rows["AGENTJUDGE_PG_IN_MEMORY"]
    assert " unset " in rows["AGENTJUDGE_WORKDIR"]
    assert "http://deb.debian.org/debian" in rows["AGENTJUDGE_DEBIAN_MIRROR"]


def test_a_value_that_does_not_parse_ends_the_command_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTJUDGE_PG_IN_MEMORY", "sometimes")
    result = runner.invoke(app, ["settings"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: invalid environment variable: AGENTJUDGE_PG_IN_MEMORY")

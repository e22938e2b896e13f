"""``--endpoint`` and ``--kind-option``: checked by the kinds before any work, on every command
that starts environments; the flags they replace still work and warn."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjudge import replay_cli, serve_cli
from agentjudge.cli import app
from environments.backends import BackendChoice

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"

COMMANDS = {
    "replay": ["replay", str(MINI)],
    "judge": ["judge", str(MINI)],
    "serve": ["serve", "desktop", "some-trajectory", "--dataset", str(MINI)],
}


class WorkStartedError(Exception):
    """Raised by a spy where the command would start its work."""


@pytest.fixture
def choices(monkeypatch: pytest.MonkeyPatch) -> list[BackendChoice]:
    """The backend choices the commands would start their work with (the work does not run)."""
    seen: list[BackendChoice] = []

    async def replay(dataset: Path, folder: Path, *, choice: BackendChoice, **_: Any) -> None:
        seen.append(choice)
        raise WorkStartedError

    async def evaluate(dataset: Path, options: Any, **_: Any) -> None:  # judge imports it
        seen.append(
            BackendChoice.for_backend(
                options.backend, endpoints=options.endpoints, options=options.kind_options
            )
        )
        raise WorkStartedError

    async def serve(*_: Any, choice: BackendChoice, **__: Any) -> None:
        seen.append(choice)
        raise WorkStartedError

    import bench.evaluate

    monkeypatch.setattr(replay_cli, "replay_dataset", replay)
    monkeypatch.setattr(bench.evaluate, "evaluate_async", evaluate)
    monkeypatch.setattr(serve_cli, "_serve", serve)
    return seen


class _Result:
    """A command's exit code, exception and output, the output as one line of words (usage
    errors come in a wrapped box)."""

    def __init__(self, command: list[str]) -> None:
        result = CliRunner().invoke(app, command)
        self.exit_code = result.exit_code
        self.exception = result.exception
        self.output = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())


def _invoke(command: list[str]) -> _Result:
    return _Result(command)


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_an_endpoint_reaches_its_kind_normalised(
    command: list[str], choices: list[BackendChoice]
) -> None:
    result = _invoke([*command, "--endpoint", "desktop=http://vm:5000/, http://vm2:5000"])
    assert isinstance(result.exception, WorkStartedError), result.output
    assert choices[0].endpoints == {"desktop": "http://vm:5000,http://vm2:5000"}
    assert choices[0].kinds["desktop"] == "osworld"
    assert "deprecated" not in result.output


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_the_desktop_url_alias_works_and_warns(
    command: list[str], choices: list[BackendChoice]
) -> None:
    result = _invoke([*command, "--desktop-url", "http://vm:5000/"])
    assert isinstance(result.exception, WorkStartedError), result.output
    assert choices[0].endpoints == {"desktop": "http://vm:5000"}
    assert "--desktop-url is deprecated; use --endpoint desktop=" in result.output


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_the_dsn_alias_works_and_warns(command: list[str], choices: list[BackendChoice]) -> None:
    result = _invoke([*command, "--dsn", "postgresql://judge@127.0.0.1:5432/postgres"])
    assert isinstance(result.exception, WorkStartedError), result.output
    assert choices[0].endpoints == {"postgres": "postgresql://judge@127.0.0.1:5432/postgres"}
    assert choices[0].kinds["postgres"] == "external"
    assert "--dsn is deprecated; use --endpoint postgres=DSN" in result.output


@pytest.mark.parametrize(
    "command", [COMMANDS["replay"], COMMANDS["judge"]], ids=["replay", "judge"]
)
def test_the_seed_timeout_alias_works_and_warns(
    command: list[str], choices: list[BackendChoice]
) -> None:
    result = _invoke([*command, "--seed-timeout", "2.5"])
    assert isinstance(result.exception, WorkStartedError), result.output
    assert choices[0].options == {"postgres": {"seed_timeout": 2.5}}
    assert "--seed-timeout is deprecated; use --kind-option postgres.seed_timeout=" in (
        result.output
    )
    # The new spelling says the same without a warning.
    again = _invoke([*command, "--kind-option", "postgres.seed_timeout=2.5"])
    assert isinstance(again.exception, WorkStartedError), again.output
    assert choices[1] == choices[0]
    assert "deprecated" not in again.output


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_a_bad_url_is_a_usage_error_naming_it(command: list[str]) -> None:
    result = _invoke([*command, "--desktop-url", "vm-without-scheme:5000"])
    assert result.exit_code == 2
    assert "vm-without-scheme:5000" in result.output
    assert "--desktop-url" in result.output
    result = _invoke([*command, "--endpoint", "desktop=vm-without-scheme:5000"])
    assert result.exit_code == 2
    assert "vm-without-scheme:5000" in result.output
    assert "--endpoint" in result.output


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("postgres.seed_timout=30", ["postgres", "'seed_timout'", "seed_timeout"]),
        ("postgres.seed_timeout=-1", ["postgres.seed_timeout", "greater than 0", "'-1'"]),
        ("postgres.seed_timeout=soon", ["postgres.seed_timeout", "'soon'"]),
        ("filesystem.depth=3", ["filesystem kind has no option 'depth'", "its options: none"]),
        ("nowhere.depth=3", ["no environment kind 'nowhere'"]),
        ("postgres=30", ["KIND.FIELD=VALUE"]),
    ],
    ids=[
        "unknown-field",
        "negative",
        "not-a-number",
        "kind-without-options",
        "unknown-kind",
        "shape",
    ],
)
@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_a_bad_kind_option_names_the_kind_and_field(
    command: list[str], option: str, named: list[str]
) -> None:
    result = _invoke([*command, "--kind-option", option])
    assert result.exit_code == 2, result.output
    assert "--kind-option" in result.output
    for text in named:
        assert text in result.output


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_an_endpoint_for_a_kind_without_a_connecting_backend_is_refused(
    command: list[str],
) -> None:
    result = _invoke([*command, "--endpoint", "filesystem=/srv/trees"])
    assert result.exit_code == 2, result.output
    assert "filesystem kind has no backend that connects to an endpoint" in result.output
    result = _invoke([*command, "--endpoint", "nowhere=http://vm:5000"])
    assert result.exit_code == 2, result.output
    assert "no environment kind 'nowhere'" in result.output


def test_judge_help_is_grouped_into_panels() -> None:
    result = CliRunner().invoke(app, ["judge", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    titles = ["Model", "Grid", "Limits", "Environments", "Output"]
    places = [result.output.find(f"─ {title} ─") for title in titles]
    assert all(place >= 0 for place in places), result.output
    assert places == sorted(places)
    environments = result.output[places[3] : places[4]]
    for option in ("--endpoint", "--kind-option", "--backend", "--environment", "--dsn"):
        assert option in environments
    assert "Deprecated" in environments

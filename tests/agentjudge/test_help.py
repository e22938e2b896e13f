"""``--help`` lists what the registries hold when it is asked for (served kinds, judge modes,
model providers, kinds' endpoints), keeps every ``<placeholder>`` of every command, and the
replay table's header and columns are explained."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import judge_agent.modes
import judge_agent.providers.registry
from agentjudge import replay_cli
from agentjudge.cli import app
from agentjudge.console import console
from agentjudge.help import keep_placeholders
from environments.backends import BackendChoice
from environments.registry import register_kind, served_kinds, unregister_kind
from judge_agent.conversation import single_call
from judge_agent.modes import JudgeModeSpec, mode_names
from judge_agent.providers.registry import ProviderRegistration, provider_names
from prompts import PromptStyle
from replay.runner import DEFAULT_OUTPUT, ReplaySummary, SubdomainRow
from tests.environments.notes_kind import NotesKind

runner = CliRunner(env={"COLUMNS": "400", "JUDGE_MODEL": ""})


def _flat(text: str) -> str:
    """Rendered help with the panels' borders and line breaks folded away."""
    return " ".join(text.replace("│", " ").split())


def _help(*command: str) -> str:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    return _flat(result.output)


class _Jotter(NotesKind):
    """A test kind served under a name of its own."""

    name = "jotter"
    serve_name = "jots"


@pytest.fixture
def jotter() -> Iterator[None]:
    register_kind(_Jotter())
    try:
        yield
    finally:
        unregister_kind("jotter")


def test_serve_help_names_every_served_kind_of_the_registry(jotter: None) -> None:
    shown = _help("serve")
    served = served_kinds()
    assert {"filesystem", "sql", "android", "browser", "desktop"} <= set(served)
    for name in served:
        assert re.search(rf"\b{re.escape(name)}\b", shown), name
    assert "sql (the postgres kind)" in shown
    assert "jots (the jotter kind)" in shown  # registered after import, listed all the same
    assert "trajectory: the record only" in shown


def test_a_kind_registered_later_is_gone_from_help_once_unregistered() -> None:
    register_kind(_Jotter())
    try:
        assert "jots (the jotter kind)" in _help("serve")
    finally:
        unregister_kind("jotter")
    assert "jots" not in _help("serve")


@pytest.fixture
def extra_mode_and_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = JudgeModeSpec(
        name="glance",
        description="one look at the final screenshot",
        conversation=single_call,
        prompt=PromptStyle(),
    )
    monkeypatch.setitem(judge_agent.modes._REGISTRY, spec.name, spec)
    monkeypatch.setitem(
        judge_agent.providers.registry._REGISTRY,
        "inhouse",
        ProviderRegistration("inhouse", "tests.nowhere:Model"),
    )


def test_judge_help_lists_the_registered_modes_groups_and_providers(
    extra_mode_and_provider: None,
) -> None:
    shown = _help("judge")
    for name in mode_names():
        assert re.search(rf"\b{re.escape(name)}\b", shown), name
    assert "glance: one look at the final screenshot" in shown
    assert "mobile-methods (" in shown
    assert "or all (agent, llm, react, glance)" in shown
    for provider in provider_names():
        assert provider in shown
    assert "inhouse" in shown


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command below ``command`` (a click command, Typer's own click included)."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


PLACEHOLDER = re.compile(r"<[^<>\s`]+>|\{[^{}\s`]+\}")


def test_every_commands_help_keeps_its_placeholders() -> None:
    root = typer.main.get_command(app)
    checked = 0
    for path, command in _commands(root):
        texts = [command.help or ""]
        texts += [getattr(param, "help", None) or "" for param in command.params]
        wanted = {token for text in texts for token in PLACEHOLDER.findall(text)}
        if not wanted:
            continue
        shown = _help(*path)
        for token in wanted:
            assert token in shown, f"{' '.join(path) or 'agentjudge'} --help lost {token}"
        checked += 1
    assert checked >= 4  # view, import-mobile, import-osworld, import-files at least


def test_the_known_placeholders_survive() -> None:
    assert "runs/judge/<dataset>" in _help("view")
    assert "runs/replay/<dataset>-*" in _help("view")
    assert "<Task>_<n>.pkl.gz" in _help("datasets", "import-mobile")
    assert "examples/<domain>/<id>.json" in _help("datasets", "import-osworld")


def test_escaping_keeps_code_spans_and_is_idempotent() -> None:
    text = "a <b> `c <d>` e"
    once = keep_placeholders(text)
    assert once == r"a \<b> `c <d>` e"
    assert keep_placeholders(once) == once


def _summary() -> ReplaySummary:
    row = SubdomainRow(domain="ds", subdomain="filesystem", trajectories=2, faithful=2)
    return ReplaySummary(
        dataset="datasets/ds",
        backends=BackendChoice(kinds={"postgres": "docker"}),
        rows=[row],
        total=row.model_copy(update={"domain": "all", "subdomain": "all"}),
    )


def test_the_replay_table_has_a_legend_for_its_columns() -> None:
    with console.capture() as captured:
        replay_cli.print_summary(_summary(), DEFAULT_OUTPUT)
    text = captured.get()
    for column in ("of which shown only", "no replay", "label crashed", "verifier error"):
        legend = [line for line in text.splitlines() if line.strip().startswith(column)]
        assert legend, f"no legend line for {column!r}"
        assert len(legend[0].strip()) > len(column) + 10  # followed by what it counts


def test_the_backend_header_says_whose_backend_each_is() -> None:
    described = _summary().backends.describe()
    assert "postgres docker" in described
    assert "filesystem local" in described
    assert "/" not in described

"""The docs site's reference, generated from the code each time the site is built.

A mkdocs hook (``hooks:`` in ``mkdocs.yml``): a page line ``<!-- generated: NAME -->`` is replaced
by what ``GENERATORS[NAME]`` writes from the code as it is (every command's ``--help``, the
settings, the dataset files' fields, each MCP server's tools), so the reference cannot go stale
and nothing generated is committed. An unknown name fails the build. ``python docs/gen_reference.py
NAME`` prints one section, for a look without building the site.
"""

from __future__ import annotations

import functools
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)
"""A placeholder line for a generated section."""

REPOSITORY = Path(__file__).resolve().parents[1]

HELP_ENVIRONMENT = {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}
"""Help is rendered at a fixed width without colours, so every build writes the same page."""


def _on_path() -> None:
    """Make the repository importable when mkdocs loads this file by its path."""
    if str(REPOSITORY) not in sys.path:
        sys.path.insert(0, str(REPOSITORY))


def _command_paths() -> Iterator[tuple[str, ...]]:
    """Every command of ``agentjudge``, groups before their commands, in registration order."""
    import typer.main

    from agentjudge.cli import app

    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        # Typer ships its own copy of click, so groups are told by their ``commands`` table.
        yield path
        for name, child in (getattr(command, "commands", None) or {}).items():
            if not getattr(child, "hidden", False):
                yield from walk(child, (*path, name))

    yield from walk(typer.main.get_command(app), ())


def cli_reference() -> str:
    """Every command's ``--help``, as the installed CLI prints it."""
    from typer.testing import CliRunner

    from agentjudge.cli import app

    runner = CliRunner()
    sections = []
    for path in _command_paths():
        result = runner.invoke(app, [*path, "--help"], env=HELP_ENVIRONMENT, prog_name="agentjudge")
        if result.exit_code != 0:
            raise RuntimeError(f"agentjudge {' '.join(path)} --help failed:\n{result.output}")
        text = "\n".join(line.rstrip() for line in result.output.strip().splitlines())
        name = " ".join(("agentjudge", *path))
        sections.append(f"## `{name}`\n\n```text\n{text}\n```\n")
    return "\n".join(sections)


def settings_reference() -> str:
    """The ``AGENTJUDGE_*`` variables, from the settings model's field docstrings."""
    from settings import settings_table

    return settings_table()


def _type_text(annotation: Any) -> str:
    """A short, readable form of a field's type for a table cell."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_text(arguments[0])
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_text(argument) for argument in arguments)
    if origin is typing.Literal:
        return " \\| ".join(f"`{argument}`" for argument in arguments)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        inner = ", ".join(_type_text(argument) for argument in arguments)
        return f"{name}[{inner}]" if inner else name
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def _model_table(model: Any) -> str:
    lines = ["| field | type | required | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        meaning = " ".join((field.description or "").split()).replace("|", "\\|")
        required = "yes" if field.is_required() else "no"
        lines.append(
            f"| `{field.alias or name}` | {_type_text(field.annotation)} | {required} | {meaning} |"
        )
    return "\n".join(lines)


def schema_reference() -> str:
    """The fields of every record a dataset or a results folder holds, from the pydantic models."""
    from dataset import models
    from dataset.corrections import LabelCorrection
    from dataset.store import Manifest
    from judge_agent.verdict import Verdict

    records: list[tuple[str, Any, str]] = [
        ("Manifest", Manifest, "`dataset.json`"),
        ("Task", models.Task, "`tasks/<task_id>/task.json`"),
        ("Trajectory", models.Trajectory, "`trajectories/<id>.json`"),
        ("Step", models.Step, "one entry of `Trajectory.steps`"),
        ("Observation", models.Observation, "`Step.observation`"),
        ("Label", models.Label, "`Trajectory.label`"),
        ("ClaimItem", models.ClaimItem, "one entry of `Trajectory.items`"),
        ("Provenance", models.Provenance, "`Trajectory.provenance`"),
        ("VerifierRef", models.VerifierRef, "`Task.verifier`"),
    ]
    states = [
        models.DirectoryTreeState,
        models.SqlSeedState,
        models.DocumentState,
        models.AppSnapshotState,
        models.PageArchiveState,
        models.EmptyState,
        models.ExternalState,
    ]
    records += [
        (state.__name__, state, "`Task.initial_state`, one of the union") for state in states
    ]
    records += [
        ("Verdict", Verdict, "a judge's answer, in `verdicts.jsonl`"),
        ("LabelCorrection", LabelCorrection, "one line of `label_corrections.jsonl`"),
    ]
    sections = []
    for title, model, where in records:
        doc = " ".join((model.__doc__ or "").split())
        sections.append(f"## {title}\n\nWhere: {where}. {doc}\n\n{_model_table(model)}\n")
    return "\n".join(sections)


def _tool_rows(tools: Mapping[str, Any]) -> str:
    lines = ["| tool | writes | parameters | what it does |", "| --- | --- | --- | --- |"]
    for spec in tools.values():
        schema = spec.arguments.model_json_schema(by_alias=True)
        required = set(schema.get("required", ()))
        parameters = ", ".join(
            f"`{name}`" + ("" if name in required else "?") for name in schema.get("properties", {})
        )
        description = " ".join(spec.description.split()).replace("|", "\\|")
        writes = "yes" if spec.writes else "no"
        lines.append(f"| `{spec.name}` | {writes} | {parameters or '-'} | {description} |")
    return "\n".join(lines)


def _sql_judge_tools(mode: str) -> Mapping[str, Any]:
    """The judges' SQL tools in one access mode, with the default limits (their descriptions
    state the limits, so they are made for a session; nothing connects)."""
    from mcp_servers.sql import access, judge_server

    session = access.SqlSession(
        access.endpoint_for("postgresql://judge@127.0.0.1:5432/database"),
        access=typing.cast(access.AccessMode, mode),
        max_rows=judge_server.DEFAULT_MAX_ROWS,
        statement_timeout=judge_server.DEFAULT_STATEMENT_TIMEOUT,
    )
    return judge_server._tools(session)


def mcp_tools_reference() -> str:
    """Each MCP server's tool table as published, from the servers' own tool specs."""
    from mcp_servers.browser.tools import BROWSER_TOOLS
    from mcp_servers.desktop.server import TOOLS as DESKTOP_TOOLS
    from mcp_servers.device.server import ACTION_TOOLS as DEVICE_TOOLS
    from mcp_servers.filesystem.operations import FILESYSTEM_TOOLS
    from mcp_servers.sql.agent_tools import SERVER_TOOLS
    from mcp_servers.trajectory.server import TOOLS as TRAJECTORY_TOOLS
    from mcp_servers.workspace.tools import AGENT_TOOLS, JUDGE_WRITING_TOOLS

    servers: list[tuple[str, str, Mapping[str, Any]]] = [
        (
            "filesystem",
            "`python -m mcp_servers.filesystem --root DIR`; the filesystem kind's judges",
            FILESYSTEM_TOOLS,
        ),
        (
            "trajectory",
            "`python -m mcp_servers.trajectory FILE`; every tool-using judge",
            TRAJECTORY_TOOLS,
        ),
        (
            "browser",
            "`python -m mcp_servers.browser --archive PATH`; the browser kind",
            BROWSER_TOOLS,
        ),
        (
            "desktop (GUI)",
            "`python -m mcp_servers.desktop --url URL`; the desktop kind",
            DESKTOP_TOOLS,
        ),
        (
            "device (phone)",
            "`python -m mcp_servers.device`; the android kind (and `get_screen`, which only looks)",
            DEVICE_TOOLS,
        ),
        (
            "workspace, judge side",
            "`python -m mcp_servers.workspace --root DIR --writable` (read-only judges get the "
            "tools that do not write)",
            JUDGE_WRITING_TOOLS,
        ),
        (
            "workspace, agent side",
            "`python -m mcp_servers.workspace --root DIR --agent`: the recorded agents' tools",
            AGENT_TOOLS,
        ),
    ]
    servers += [
        (
            f"sql ({mode})",
            f"`python -m mcp_servers.sql --dsn DSN --access-mode {mode}`; the postgres kind's "
            + ("read-only judges" if mode == "read-only" else "writable judges"),
            _sql_judge_tools(mode),
        )
        for mode in ("read-only", "unrestricted")
    ]
    servers += [
        (
            f"recorded SQL tools: {server}",
            "the tools of the SQL server an MCPMark agent used, as replay runs them again",
            tools,
        )
        for server, tools in SERVER_TOOLS.items()
    ]
    sections = [
        f"## {name}\n\nServed by: {where}.\n\n{_tool_rows(tools)}\n"
        for name, where, tools in servers
    ]
    return "\n".join(sections)


def make_reference() -> str:
    """The Makefile's targets: the comment above each (when it has one) and what it runs."""
    lines = (REPOSITORY / "Makefile").read_text(encoding="utf-8").splitlines()
    rows = ["| target | what it is for | what it runs |", "| --- | --- | --- |"]
    for index, line in enumerate(lines):
        match = re.match(r"^([a-z][a-z%-]*):(?!=)(.*)$", line)
        if match is None:
            continue
        comment: list[str] = []
        for previous in reversed(lines[:index]):
            if not previous.startswith("#"):
                break
            comment.insert(0, previous.lstrip("# ").strip())
        recipe = []
        for following in lines[index + 1 :]:
            if not following.startswith("\t"):
                break
            recipe.append(following.strip())
        runs = ("; ".join(recipe) or f"the targets {match.group(2).strip()}").replace("|", "\\|")
        purpose = " ".join(comment).replace("|", "\\|")
        rows.append(f"| `make {match.group(1)}` | {purpose} | `{runs}` |")
    return "\n".join(rows)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "settings": settings_reference,
    "schema": schema_reference,
    "mcp-tools": mcp_tools_reference,
    "make": make_reference,
}
"""What each placeholder name is replaced with."""


@functools.cache
def generated(name: str) -> str:
    """One generated section (made once per build)."""
    if name not in GENERATORS:
        raise KeyError(f"no generated section {name!r}; known: {', '.join(sorted(GENERATORS))}")
    _on_path()
    return GENERATORS[name]().rstrip() + "\n"


def expand(markdown: str) -> str:
    """``markdown`` with every placeholder line replaced by its generated section."""
    return MARKER.sub(lambda match: generated(match.group(1)), markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The mkdocs hook: expand the placeholders of every page."""
    return expand(markdown)


if __name__ == "__main__":
    print(generated(sys.argv[1]))

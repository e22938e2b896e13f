"""``agentjudge serve``: serve one trajectory's environment (or its record) to any MCP client.

The served names are the environment kinds' (``EnvironmentKind.serve_name``: ``filesystem``,
``sql``, and those of kinds registered later) plus ``trajectory``, the recorded steps themselves;
a kind's tools are served together with the record's (``VIEW_TRAJECTORY_STEP``).
Stdout carries the MCP protocol, so everything this command says goes to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from agentjudge.endpoints import (
    BackendOption,
    DesktopUrlOption,
    DsnOption,
    EndpointOption,
    KindOptionOption,
    backend_choice,
    parse_kind_settings,
)
from dataset.problems import DatasetError
from dataset.store import check_dataset_folder, load_dataset

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from environments.kind import EnvironmentKind
    from mcp_servers.serving import ToolServer
    from sandboxes.base import Sandbox

TRAJECTORY = "trajectory"
"""The served name of the recorded trajectory (no replay)."""

DEFAULT_DATASET = Path("datasets/examples/mini")

_log = Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(message: str) -> typer.Exit:
    _log.print(f"error: {message}", markup=False)
    return typer.Exit(2)


def served_kind(name: str) -> EnvironmentKind:
    """The environment kind served as ``name``; an unknown name fails listing the served ones."""
    from environments.registry import served_kinds

    served = served_kinds()
    if name not in served:
        known = ", ".join([*served, TRAJECTORY])
        raise _fail(f"nothing is served as {name!r} (served: {known})")
    return served[name]


@contextlib.asynccontextmanager
async def _environment(
    dataset_root: Path,
    trajectory_id: str,
    kind: EnvironmentKind,
    *,
    choice: BackendChoice,
    writable: bool,
    verify: bool,
) -> AsyncIterator[Sandbox]:
    """Replay the trajectory, freeze its final state and hand out a view (or a private clone)."""
    from environments.backends import ProviderSet
    from environments.leftovers import collect_all_leftovers
    from environments.registry import kind_for_task
    from replay.frozen import FrozenReplays

    dataset = load_dataset(dataset_root, partial=True)
    if trajectory_id not in dataset.trajectories:
        raise _fail(f"{dataset_root}: no trajectory {trajectory_id!r} (or it failed validation)")
    await collect_all_leftovers(choice.endpoints)
    async with (
        ProviderSet(choice) as providers,
        FrozenReplays(dataset, providers, verify=verify) as replays,
    ):
        _log.print(f"replaying {trajectory_id} ...", markup=False)
        frozen = await replays.get(trajectory_id)
        report = frozen.report
        _log.print(f"replay: {report.verdict}", markup=False)
        sandbox = await replays.environment(trajectory_id, writable=writable)
        if sandbox is None:
            problems = "; ".join(report.problems) or "its domain has no replay"
            raise _fail(f"{trajectory_id} has no environment to serve: {problems}")
        left = kind_for_task(dataset.tasks[dataset.trajectories[trajectory_id].task_id])
        if left is not kind:
            name = left.name if left else "unknown"
            raise _fail(f"{trajectory_id} left a {name} environment, not one for {kind.serve_name}")
        try:
            yield sandbox
        finally:
            if writable:
                await replays.release_clone(trajectory_id, sandbox)


async def _serve(
    name: str,
    trajectory_id: str,
    dataset_root: Path,
    *,
    choice: BackendChoice,
    writable: bool,
    verify: bool,
) -> None:
    from environments.kind import JudgeServerOptions
    from mcp_servers.serving import serve_stdio, with_tools_of
    from mcp_servers.trajectory.loading import load_trajectory_file, trajectory_file_in_dataset

    def record() -> ToolServer[Any]:
        return load_trajectory_file(
            trajectory_file_in_dataset(dataset_root, trajectory_id)
        ).server()

    if name == TRAJECTORY:
        await serve_stdio(record().server())
        return
    kind = served_kind(name)
    async with (
        _environment(
            dataset_root,
            trajectory_id,
            kind,
            choice=choice,
            writable=writable,
            verify=verify,
        ) as sandbox,
        kind.judge_servers(sandbox, JudgeServerOptions(writable=writable)) as servers,
    ):
        if len(servers) != 1:
            raise _fail(f"the {kind.name} kind has {len(servers)} servers; serve serves one")
        recorded = record()  # the record's tools too, as every tool-using judge has them
        try:
            served = with_tools_of(servers[0], recorded)
        except ValueError as error:
            raise _fail(f"the {kind.name} server and the trajectory's record: {error}") from None
        where = kind.sandbox_root(sandbox) or sandbox.name
        mode = "a private writable clone" if writable else "the read-only view"
        _log.print(
            f"serving {name} tools and the record's {', '.join(recorded.tools)} over stdio on "
            f"{mode} of {trajectory_id} ({where}); the state lives as long as this connection "
            "(a client that reconnects per tool call gets a fresh replay each time)",
            markup=False,
        )
        await serve_stdio(served.server())


def kind_help() -> str:
    """The ``KIND`` argument's help: every served name in the registry, with its kind."""
    from environments.registry import served_kinds

    names = [
        name if kind.name == name else f"{name} (the {kind.name} kind)"
        for name, kind in served_kinds().items()
    ]
    return (
        f"What to serve: {', '.join(names)}: the replayed final state, with the record's "
        f"VIEW_TRAJECTORY_STEP; {TRAJECTORY}: the record only."
    )


def serve(
    kind: Annotated[
        str,
        # The help lists the registry's served names when rendered (``kind_help``).
        typer.Argument(help="What to serve: a kind's served name, or trajectory."),
    ],
    trajectory_id: Annotated[str, typer.Argument(help="The trajectory to serve.")],
    dataset: Annotated[
        Path, typer.Option(help="The dataset holding the trajectory.")
    ] = DEFAULT_DATASET,
    backend: BackendOption = "auto",
    endpoint: EndpointOption = None,
    kind_option: KindOptionOption = None,
    writable: Annotated[
        bool,
        typer.Option(
            "--writable",
            help="Serve a private writable clone with the writing tools (default: read-only).",
        ),
    ] = False,
    verify: Annotated[
        bool, typer.Option(help="Run the task's verifier after replaying (slower).")
    ] = False,
    dsn: DsnOption = None,
    desktop_url: DesktopUrlOption = None,
) -> None:
    """Serve a trajectory's environment over stdio, for any MCP client.

    A kind's served name (listed under KIND) replays the trajectory into a sandbox, freezes the
    state the agent left, and serves its read-only view (or, with --writable, a private clone
    that the writing tools may change; the frozen state never changes), together with the
    record's VIEW_TRAJECTORY_STEP and trajectory_overview. `trajectory` serves the recorded
    steps alone, without replaying. Everything is cleaned up when the client disconnects, so
    keep one connection for the whole session: a client that starts the server per tool call
    replays each time and loses what earlier calls changed. Example client configuration:
    command `agentjudge`, arguments
    `serve filesystem fs-meeting-notes-index--pass --dataset datasets/examples/mini`.
    """
    settings = parse_kind_settings(endpoint, kind_option, dsn=dsn, desktop_url=desktop_url)
    choice = backend_choice(backend, settings)
    try:
        check_dataset_folder(dataset)  # a missing folder is exit code 2 naming it
        asyncio.run(
            _serve(
                kind,
                trajectory_id,
                dataset,
                choice=choice,
                writable=writable,
                verify=verify,
            )
        )
    except DatasetError as error:
        raise _fail(str(error)) from None
    except KeyboardInterrupt:
        sys.exit(130)

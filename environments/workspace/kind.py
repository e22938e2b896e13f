"""The workspace kind's record: a coding agent's project folder, replayed and judged.

Tasks of ``ds/workspace`` start from a project folder (a directory tree) and replay into a
private copy of it on the host, through the filesystem kind's local provider (snapshots, clones
and cleanup are the same). Recorded calls are a coding agent's four tools
(``mcp_servers.workspace.tools``): shell commands run in the dataset-code box on the project,
with no network and time and output limits; file reads and edits go through the tree's path
confinement. Recordings hold paths relative to the project, so there is no sandbox root to
substitute. The task's verifier (its author's tests) gets the folder as ``WORKSPACE_DIR``,
read-only. Judges get the workspace server: reading tools over the end state, and commands on
a throwaway copy of it (or on their private clone, when writable).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from dataset.models import DirectoryTreeState, InitialState, Task
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    JudgeServerOptions,
    LeftoverSource,
    ProviderFactory,
    VerifierInputs,
    WorkerResources,
)
from mcp_servers.results import ToolResult, ToolSpec
from sandboxes.base import Sandbox, SandboxError, SandboxProvider

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from mcp_servers.serving import ToolServer
    from sandboxes.filesystem.local import LocalFileTree

WORKSPACE_DIR_VARIABLE = "WORKSPACE_DIR"
"""The variable that names the project folder for a task's ``verify.py``."""


def project_tree(sandbox: Sandbox) -> LocalFileTree:
    """The project folder of a workspace sandbox (a local filesystem sandbox's tree); any other
    sandbox raises ``TypeError``."""
    from sandboxes.filesystem.local import LocalFileTree
    from sandboxes.filesystem.sandbox import FilesystemSandbox

    tree = sandbox.tree if isinstance(sandbox, FilesystemSandbox) else None
    if not isinstance(tree, LocalFileTree):
        raise TypeError(f"{sandbox.name} is not a project folder on this host")
    return tree


async def _local(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.filesystem.local import LocalFilesystemProvider

    return LocalFilesystemProvider()


async def _directories() -> list[str]:
    from sandboxes.filesystem.local import collect_local_leftovers

    return await collect_local_leftovers()


class WorkspaceKind(EnvironmentKind):
    """A project folder with a shell, reached through a coding agent's tools."""

    name: ClassVar[str] = "workspace"
    serve_name: ClassVar[str] = "workspace"
    tasks: ClassVar[frozenset[tuple[str, str]]] = frozenset({("ds", "workspace")})
    initial_states: ClassVar[frozenset[str]] = frozenset({"directory_tree"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {"local": _local}
    worker_resources: ClassVar[WorkerResources] = WorkerResources(cpus=0.5, memory_mb=512)

    def backend_for(self, backend: CommandLineBackend) -> str:
        """Always ``local``: the project is a host folder and its commands run in the
        dataset-code box (bubblewrap), which already isolates them; ``docker`` asks for nothing
        more here."""
        return "local"

    def supplied_state(self, state: InitialState, supplied: Path) -> InitialState:
        """A supplied folder is the starting project."""
        if not supplied.is_dir():
            raise SandboxError(f"{supplied}: a workspace environment must be a folder")
        return DirectoryTreeState(path=supplied.name)

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """The recorded coding agents' tool ``name``."""
        from mcp_servers.workspace.tools import AGENT_TOOLS

        return AGENT_TOOLS.get(name)

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """The agent's tool's answer to the call, on the sandbox's project folder (commands'
        changes stay in it)."""
        from mcp_servers.results import call_tool
        from mcp_servers.workspace.tools import AGENT_TOOLS, Workspace

        workspace = Workspace(tree=project_tree(sandbox), keep_changes=True)
        return await call_tool(AGENT_TOOLS, workspace, name, arguments)

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        """``WORKSPACE_DIR``: the project folder on the host, bound read-only into the
        verifier's box (the verifier copies it before running its tests there)."""
        directory = await project_tree(sandbox).host_directory()
        yield VerifierInputs(
            environment={WORKSPACE_DIR_VARIABLE: str(directory)}, read_only=[directory]
        )

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        """The workspace judge server over the project folder."""
        from mcp_servers.workspace.server import workspace_judge_server

        yield [workspace_judge_server(project_tree(sandbox), writable=options.writable)]

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The coding agents' four tools over a writable project folder."""
        from mcp_servers.workspace.server import workspace_agent_server

        return workspace_agent_server(project_tree(sandbox))

    def prompt_notes(self, task: Task) -> str | None:
        """The kind's own notes, ``judge_notes.md`` beside this module."""
        return f"{__package__}:judge_notes.md"

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """The run directories of dead runs (project folders and command boxes live there)."""
        return (LeftoverSource("directories", _directories, order=900),)


KIND = WorkspaceKind()
"""The registered record (``environments.registry`` names it by module path)."""

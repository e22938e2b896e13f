"""The filesystem kind's record: backends, replay, verifier inputs, judge servers, leftovers.

Tasks of ``ds/filesystem`` start from a directory tree (or nothing) and replay into a private
tree on the host (``local``) or in a container (``docker``). Recorded calls are the reference
filesystem server's, re-executed on the tree with ``${SANDBOX_ROOT}`` as the tree's root. Heavy
modules (the tools, the Docker client) are imported when a hook needs them, so finding the kind
stays cheap.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from dataset.models import DirectoryTreeState, InitialState, Task
from environments.filesystem.comparison import normalise_filesystem_output
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    ImageRecipe,
    JudgeServerOptions,
    LeftoverSource,
    ProviderFactory,
    VerifierInputs,
)
from mcp_servers.results import ToolResult, ToolSpec
from sandboxes.base import Sandbox, SandboxError, SandboxProvider
from sandboxes.filesystem.sandbox import FilesystemSandbox
from sandboxes.runs import current_run

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from mcp_servers.serving import ToolServer


def as_filesystem_sandbox(sandbox: Sandbox) -> FilesystemSandbox:
    """``sandbox`` as a filesystem sandbox; a sandbox of another kind raises ``TypeError``."""
    if not isinstance(sandbox, FilesystemSandbox):
        raise TypeError(f"{sandbox.name} is a {sandbox.kind} sandbox, not a filesystem one")
    return sandbox


async def _local(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.filesystem.local import LocalFilesystemProvider

    return LocalFilesystemProvider()


async def _docker(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.docker.images import ensure_sandbox_image_async
    from sandboxes.filesystem.docker import DockerFilesystemProvider

    await ensure_sandbox_image_async()  # builds it once (minutes), then cached by tag
    return DockerFilesystemProvider()


async def _directories() -> list[str]:
    from sandboxes.filesystem.local import collect_local_leftovers

    return await collect_local_leftovers()


class FilesystemKind(EnvironmentKind):
    """A directory tree, reached through the reference filesystem server's tools."""

    name: ClassVar[str] = "filesystem"
    serve_name: ClassVar[str] = "filesystem"
    tasks: ClassVar[frozenset[tuple[str, str]]] = frozenset({("ds", "filesystem")})
    initial_states: ClassVar[frozenset[str]] = frozenset({"directory_tree", "empty"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {"local": _local, "docker": _docker}

    def backend_for(self, backend: CommandLineBackend) -> str:
        """``local``: a private host directory; ``docker``: a container with the tree inside."""
        return "docker" if backend == "docker" else "local"

    def images(self) -> Sequence[ImageRecipe]:
        """The sandbox image its ``docker`` backend runs the trees in."""
        from environments.images import SANDBOX_IMAGE

        return (SANDBOX_IMAGE,)

    def supplied_state(self, state: InitialState, supplied: Path) -> InitialState:
        """A supplied folder is the starting tree."""
        if not supplied.is_dir():
            raise SandboxError(f"{supplied}: a filesystem environment must be a folder")
        return DirectoryTreeState(path=supplied.name)

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """The reference filesystem server's tool ``name``."""
        from mcp_servers.filesystem.operations import FILESYSTEM_TOOLS

        return FILESYSTEM_TOOLS.get(name)

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """The reference server's answer to the call, on the sandbox's tree."""
        from mcp_servers.filesystem.operations import call_filesystem_tool

        return await call_filesystem_tool(as_filesystem_sandbox(sandbox).tree, name, arguments)

    def sandbox_root(self, sandbox: Sandbox) -> str:
        """The tree's root as its users see it (a host directory, or ``/sandbox``)."""
        return as_filesystem_sandbox(sandbox).root

    def normalise_output(
        self, text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
    ) -> str:
        """The shared rules and the reference server's own (``environments.filesystem.
        comparison``: file times, directory order and sizes)."""
        return normalise_filesystem_output(text, tool=tool, arguments=arguments, root=root)

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        """``FILESYSTEM_TEST_DIR``: the sandbox's own directory on the host, or a fresh export
        of the tree (removed afterwards) when the tree lives in a container; bound read-only
        into the verifier's box, so a verifier cannot change what it checks."""
        from sandboxes.filesystem.local import LocalFileTree

        tree = as_filesystem_sandbox(sandbox).tree
        if isinstance(tree, LocalFileTree):
            directory = await tree.host_directory()
            yield VerifierInputs(
                environment={"FILESYSTEM_TEST_DIR": str(directory)}, read_only=[directory]
            )
            return
        export = current_run().directory() / current_run().new_name("verify")
        try:
            await tree.export(export)
            yield VerifierInputs(
                environment={"FILESYSTEM_TEST_DIR": str(export)}, read_only=[export]
            )
        finally:
            await asyncio.to_thread(shutil.rmtree, export, True)

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        """The filesystem server over the tree, without its writing tools unless
        ``options.writable``."""
        from mcp_servers.filesystem.server import filesystem_server

        tree = as_filesystem_sandbox(sandbox).tree
        yield [filesystem_server(tree, read_only=not options.writable)]

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The filesystem server with all 14 tools, as the recorded agents had it."""
        from mcp_servers.filesystem.server import filesystem_server

        return filesystem_server(as_filesystem_sandbox(sandbox).tree)

    def prompt_notes(self, task: Task) -> str | None:
        """``prompts/subdomains/filesystem.md``."""
        return "subdomains/filesystem.md"

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """Containers and images (Docker), then the run directories of dead runs (last, so no
        directory is removed under a process still using it)."""
        from environments.leftovers import DOCKER_LEFTOVERS

        return (DOCKER_LEFTOVERS, LeftoverSource("directories", _directories, order=900))


KIND = FilesystemKind()
"""The registered record (``environments.registry`` names it by module path)."""

"""A third environment kind for tests: ``notes``, two file tools over a local directory tree.

It reuses the local filesystem provider, but has its own name, served name, tasks, tool table,
verifier variable and judge server, and it records what the runtime asked of it, so tests can see
that replay, verifiers, judges and ``agentjudge serve`` went through it and not the filesystem
kind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, ClassVar

from environments.backends import BackendChoice
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    JudgeServerOptions,
    ProviderFactory,
    VerifierInputs,
)
from mcp_servers.filesystem.operations import FILESYSTEM_TOOLS
from mcp_servers.results import ToolResult, ToolSpec, call_tool
from mcp_servers.serving import ToolServer
from sandboxes.base import Sandbox, SandboxProvider
from sandboxes.filesystem.local import LocalFileTree
from sandboxes.filesystem.tree import FileTree

NOTE_TOOLS: dict[str, ToolSpec[FileTree]] = {
    name: FILESYSTEM_TOOLS[name] for name in ("read_text_file", "write_file")
}
"""The notes kind's whole tool surface."""


async def _local(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.filesystem.local import LocalFilesystemProvider

    return LocalFilesystemProvider()


def _tree(sandbox: Sandbox) -> FileTree:
    tree: FileTree = getattr(sandbox, "tree")  # noqa: B009 - the local provider's sandboxes
    return tree


class NotesKind(EnvironmentKind):
    """Notes in a directory: ``read_text_file`` and ``write_file`` only."""

    name: ClassVar[str] = "notes"
    serve_name: ClassVar[str] = "notes"
    tasks: ClassVar[frozenset[tuple[str, str]]] = frozenset({("ds", "notes")})
    initial_states: ClassVar[frozenset[str]] = frozenset({"directory_tree"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {"local": _local}

    def __init__(self) -> None:
        self.calls: list[str] = []
        """Every tool call replay executed, by name."""
        self.closed: list[SandboxProvider] = []
        """Providers closed through this kind."""

    def backend_for(self, backend: CommandLineBackend) -> str:
        return "local"

    async def close_provider(self, provider: SandboxProvider) -> None:
        self.closed.append(provider)
        await provider.aclose()

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        return NOTE_TOOLS.get(name)

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        self.calls.append(name)
        return await call_tool(NOTE_TOOLS, _tree(sandbox), name, arguments)

    def sandbox_root(self, sandbox: Sandbox) -> str:
        return _tree(sandbox).root

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        tree = _tree(sandbox)
        assert isinstance(tree, LocalFileTree)
        directory = await tree.host_directory()
        yield VerifierInputs(
            environment={"NOTES_DIR": str(directory)}, arguments=["--notes"], read_only=[directory]
        )

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        tools = {
            name: spec for name, spec in NOTE_TOOLS.items() if options.writable or not spec.writes
        }
        yield [ToolServer("notes", tools, _tree(sandbox))]


KIND = NotesKind()
"""Registered by the tests that use it (``register_kind(KIND)``)."""

"""The browser kind's record: a headless Chromium over a page archive, for search tasks.

Tasks of ``search/deep`` and ``search/wide`` start from a ``page_archive`` (a WARC file or a
page folder, ``sandboxes.browser.archive``) and replay into a browser context whose every
request the archive answers (``local`` backend: one Chromium per run on this host, off the
network). Recorded calls are Playwright MCP's browser tools, re-executed on the archive through
the same tools judges get (``mcp_servers.browser``); answers are compared by the page they show,
in either server's wording (``environments.browser.comparison``), and a recorded element
reference is carried over to the element that the replayed page gives another reference
(``environments.browser.refs``). The frozen state is the pages the agent had
open; each judge gets its own context with them reopened. Heavy modules (Playwright) are imported
when a hook needs them, so finding the kind stays cheap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from dataset.models import Task
from environments.browser.comparison import normalise_browser_output
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    JudgeServerOptions,
    LeftoverSource,
    ProviderFactory,
    VerifierInputs,
    WorkerResources,
)
from environments.steps import RecordedStep, StepFidelity
from mcp_servers.results import ToolResult, ToolSpec, call_tool
from sandboxes.base import Sandbox, SandboxProvider

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from mcp_servers.serving import ToolServer
    from sandboxes.browser.sandbox import BrowserSandbox


def as_browser_sandbox(sandbox: Sandbox) -> BrowserSandbox:
    """``sandbox`` as a browser sandbox; a sandbox of another kind raises ``TypeError``."""
    from sandboxes.browser.sandbox import BrowserSandbox

    if not isinstance(sandbox, BrowserSandbox):
        raise TypeError(f"{sandbox.name} is a {sandbox.kind} sandbox, not a browser one")
    return sandbox


async def _local(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.browser.sandbox import BrowserProvider

    return BrowserProvider()  # the browser itself starts with the first sandbox


async def _browser_leftovers() -> list[str]:
    from sandboxes.chromium import collect_chromium_leftovers

    return await collect_chromium_leftovers()


async def _directories() -> list[str]:
    from sandboxes.filesystem.local import collect_local_leftovers

    return await collect_local_leftovers()


class BrowserKind(EnvironmentKind):
    """Archived web pages, reached through Playwright MCP's browser tools."""

    name: ClassVar[str] = "browser"
    serve_name: ClassVar[str] = "browser"
    tasks: ClassVar[frozenset[tuple[str, str]]] = frozenset(
        {("search", "deep"), ("search", "wide")}
    )
    worker_resources: ClassVar[WorkerResources] = WorkerResources(cpus=0.5, memory_mb=1024)
    """Heavier than the default: a headless Chromium per judge."""
    initial_states: ClassVar[frozenset[str]] = frozenset({"page_archive"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {"local": _local}

    def serves(self, task: Task) -> bool:
        """Search tasks that come with a page archive; a search task on the live web (an
        ``empty`` state) has nothing to replay into and stays "not replayable"."""
        return super().serves(task) and task.initial_state.kind in self.initial_states

    def backend_for(self, backend: CommandLineBackend) -> str:
        """Always ``local``: the browser runs on this host whatever ``--backend`` says (it is
        kept off the network by its own walls, not by a container)."""
        return "local"

    def commands(self) -> Sequence[Callable[..., Any]]:
        """``agentjudge archive``: record live pages into an archive for this kind."""
        from environments.browser.commands import archive

        return (archive,)

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """Playwright MCP's browser tool ``name``."""
        from mcp_servers.browser.tools import BROWSER_TOOLS

        return BROWSER_TOOLS.get(name)

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """The browser tool's answer to the call, in the sandbox's browser over the archive."""
        from mcp_servers.browser.tools import BROWSER_TOOLS

        return await call_tool(BROWSER_TOOLS, as_browser_sandbox(sandbox).session, name, arguments)

    async def replay_step(self, sandbox: Sandbox, recorded: RecordedStep) -> StepFidelity:
        """The recorded call with its element reference (``ref``) made the replayed page's own
        for the same element (Playwright MCP numbers elements per snapshot, so a recording of
        the real server names them differently), then the shared replay and comparison."""
        from environments.browser.refs import with_replayed_ref

        return await super().replay_step(
            sandbox, await with_replayed_ref(as_browser_sandbox(sandbox).session, recorded)
        )

    def normalise_output(
        self, text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
    ) -> str:
        """The page the answer shows (URL, title, tabs, snapshot content), in one wording for
        Playwright MCP's answers and this project's (``environments.browser.comparison``)."""
        return normalise_browser_output(text, tool=tool, arguments=arguments, root=root)

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        """Nothing: a search task's answer is checked against its items, not by a script
        reading the browser (a ``verify.py`` would see only its task folder)."""
        as_browser_sandbox(sandbox)
        yield VerifierInputs()

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        """The browser server over the sandbox's own context (every judge has its own; the
        tools are the same either way, since nothing a judge does reaches the archive); long
        pages summarised by the judge's model when ``AGENTJUDGE_BROWSER_SUMMARIES`` is on."""
        from mcp_servers.browser.server import browser_server
        from settings import get_settings

        session = as_browser_sandbox(sandbox).session
        yield [browser_server(session, summarise_pages=get_settings().browser_summaries)]

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The browser server, as search agents had it (suites record through it)."""
        from mcp_servers.browser.server import browser_server

        return browser_server(as_browser_sandbox(sandbox).session)

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """Chromium's single-instance folders and memory cgroups of dead runs, then the run
        folders (browser profiles live there); their browser processes are killed first by the
        shared process collector (``environments.leftovers``)."""
        return (
            LeftoverSource("browser sockets", _browser_leftovers, order=800),
            LeftoverSource("directories", _directories, order=900),
        )


KIND = BrowserKind()
"""The registered record (``environments.registry`` names it by module path)."""

"""What the runtime asks of an environment kind, as one abstract record per kind.

Owns ``EnvironmentKind`` and the small records its hooks take and return (``VerifierInputs``,
``LeftoverSource``, ``WorkerResources``, ``KindOptions``, ``JudgeServerOptions``, ``ImageRecipe``;
replay's step records are ``environments.steps``'s). A kind subclasses it once, in its own
subpackage of ``environments``, and is registered by name in ``environments.registry``. Replay,
verifiers, judges, ``agentjudge serve`` and garbage collection ask the kind's record instead of
testing a sandbox's class. Nothing here knows a particular kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from dataset.models import InitialState, Task, Trajectory
from environments.comparison import normalise_common
from environments.steps import RecordedStep, StepFidelity, replay_tool_call
from mcp_servers.results import ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from sandboxes.base import Sandbox, SandboxError, SandboxProvider
from sandboxes.runs import LeftoverCollector

if TYPE_CHECKING:
    from environments.backends import BackendChoice

CommandLineBackend = Literal["auto", "local", "docker"]
"""The command line's ``--backend``: ``local`` (host resources), ``docker`` (containers), or
``auto`` (the default: each kind's own choice for this machine, see ``backend_for``)."""

ProviderFactory = Callable[["BackendChoice"], Awaitable[SandboxProvider]]
"""Starts one backend's provider (and any server or image it needs) for a run's backend choice."""


@dataclass(frozen=True)
class VerifierInputs:
    """What a task's ``verify.py`` gets to find the replayed state (the MCPMark contract), and
    what its box must show it (``sandboxes.confinement``)."""

    environment: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the verifier's environment (e.g. ``FILESYSTEM_TEST_DIR``)."""
    arguments: Sequence[str] = ()
    """Command-line arguments after ``verify.py`` (e.g. the database name)."""
    read_only: Sequence[Path] = ()
    """Host paths bound read-only into the verifier's box at the same place (the sandbox's
    tree, a relay's socket folder); the box sees nothing else of the host but the system, the
    interpreter and the task folder."""


@dataclass(frozen=True)
class LeftoverSource:
    """One collector of what dead runs left behind in one kind of resource."""

    name: str
    """Names the resource type; kinds that share a resource (Docker) give the same name, and it
    is collected once."""
    collect: LeftoverCollector
    """Removes the leftovers of dead runs and returns one line per removed thing."""
    order: int = 100
    """Collectors run by ascending order: servers and containers first, directories (900) last."""


@dataclass(frozen=True)
class WorkerResources:
    """What one judge run on a kind asks of a cluster worker: a scheduling hint for executors
    that place runs on machines (``bench.ray_executor``); the local executor ignores it."""

    cpus: float = 0.25
    """Logical CPUs (the judge loop mostly waits on the model; the environment's servers run
    beside it)."""
    memory_mb: int = 256
    """Memory in MiB for the run's sandbox, servers and frozen state."""


class KindOptions(BaseModel):
    """The settings a run may give one kind (``--kind-option KIND.FIELD=VALUE``).

    A kind subclasses it with one documented field per setting, each with a default, and names
    the subclass as its ``EnvironmentKind.options_model``; this base has no field. Values given on
    the command line arrive as text and are converted by the field's type."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)


@dataclass(frozen=True)
class JudgeServerOptions:
    """How a judge's MCP servers on one sandbox are set up (``EnvironmentKind.judge_servers``).
    A judge-side setting is one field here, read by the kinds it concerns."""

    writable: bool = False
    """Serve the writing tools too (the sandbox is the judge's private writable clone); False:
    the reading tools on a read-only view."""
    observation: str | None = None
    """What every answer of a kind with a screen carries: ``screenshot``, ``a11y_tree`` or
    ``screenshot_a11y_tree`` (None: the kind's default); other kinds ignore it."""


@dataclass(frozen=True)
class ImageRecipe:
    """A Docker image one of a kind's backends runs, built locally (``agentjudge sandboxes
    build-images``, ``make images``)."""

    name: str
    """Names the image (``sandbox``, ``desktop``); kinds sharing an image give the same name, and
    it is built once."""
    build: Callable[[bool], str]
    """Builds the image unless it is cached (always when passed True) and returns a line about
    it: its tag, and its size when known."""
    by_default: bool = True
    """Built when no kind is named; False for a large image only some runs need (the desktop's,
    about 1 GB)."""


class EnvironmentKind(ABC):
    """Everything the runtime needs to know about one kind of environment.

    Subclass it once per kind and register one instance (see ``environments.registry``).
    Callers find a sandbox's kind through its task (``registry.kind_for_task``), so a kind may
    reuse another kind's sandboxes.
    """

    name: ClassVar[str]
    """The kind's name (``filesystem``); its own sandboxes carry it as ``Sandbox.kind``."""

    serve_name: ClassVar[str]
    """The name ``agentjudge serve`` knows it by (``filesystem``; ``sql`` for postgres)."""

    tasks: ClassVar[frozenset[tuple[str, str]]]
    """The (domain, subdomain) pairs whose tasks replay into this kind."""

    initial_states: ClassVar[frozenset[str]]
    """The ``Task.initial_state`` kinds its providers can start from (``directory_tree``)."""

    backends: ClassVar[Mapping[str, ProviderFactory]]
    """Its backends by name, each with the factory of its provider; the first is the default."""

    worker_resources: ClassVar[WorkerResources] = WorkerResources()
    """What one judge run on this kind asks of a cluster worker (a desktop far more memory than
    a directory tree)."""

    endpoint_backend: ClassVar[str | None] = None
    """The backend a run selects by giving this kind an endpoint (``--endpoint KIND=VALUE``,
    ``BackendChoice.endpoints``: an existing server, by URL or DSN), or None when the kind has
    no such backend (an endpoint for it is refused)."""

    options_model: ClassVar[type[KindOptions]] = KindOptions
    """The settings a run may give this kind (``--kind-option KIND.FIELD=VALUE``): a
    ``KindOptions`` subclass with a docstring per field. Its backends read the validated values
    through ``BackendChoice.options_for``. The default has none."""

    # -- tasks and backends ----------------------------------------------------------------------

    def serves(self, task: Task) -> bool:
        """Whether ``task`` replays into this kind (its domain and subdomain are in ``tasks``)."""
        return (task.domain, task.subdomain) in self.tasks

    @property
    def default_backend(self) -> str:
        """The backend used when a run names none for this kind: the first of ``backends``."""
        return next(iter(self.backends))

    @abstractmethod
    def backend_for(self, backend: CommandLineBackend) -> str:
        """The backend that the command line's ``--backend`` selects for this kind; for
        ``auto``, the one that suits this kind on this machine. An endpoint given to the kind
        selects its ``endpoint_backend`` instead."""

    def check_endpoint(self, endpoint: str) -> str:
        """``endpoint`` (``--endpoint KIND=VALUE``) in the form the kind's ``endpoint_backend``
        reads; a bad one raises ``ValueError`` saying what is wrong. The default takes any
        text, stripped."""
        return endpoint.strip()

    def commands(self) -> Sequence[Callable[..., Any]]:
        """Commands this kind adds to ``agentjudge`` (typer command functions, each named after
        its function, e.g. the browser kind's ``archive``). The default adds none."""
        return ()

    def images(self) -> Sequence[ImageRecipe]:
        """The Docker images this kind's backends run, for ``agentjudge sandboxes build-images``
        to build ahead of a run. The default has none."""
        return ()

    async def close_provider(self, provider: SandboxProvider) -> None:
        """Close a provider one of ``backends`` started, and whatever it started with it (a
        server). The default closes the provider only."""
        await provider.aclose()

    def supplied_state(self, state: InitialState, supplied: Path) -> InitialState:
        """The initial state that replaces ``state`` when a user supplies ``supplied`` for a task
        (``--environment``), relative to ``supplied``'s folder. The default refuses."""
        raise SandboxError(f"the {self.name} kind cannot start from a supplied {supplied}")

    # -- replay ----------------------------------------------------------------------------------

    @abstractmethod
    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """The recorded agents' tool ``name`` on this kind (whether it writes), if it exists."""

    @abstractmethod
    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """Run one recorded tool call on ``sandbox`` with the semantics of the agent's server.

        ``arguments`` already hold the sandbox's root in place of ``${SANDBOX_ROOT}``. Bad
        arguments raise ``mcp_servers.results.ToolArgumentError``; tool errors are results.
        """

    def sandbox_root(self, sandbox: Sandbox) -> str:
        """What ``${SANDBOX_ROOT}`` stands for in this sandbox ("" when recordings of this kind
        hold no such paths). Replay substitutes it into arguments and masks it in outputs."""
        return ""

    async def replay_step(self, sandbox: Sandbox, recorded: RecordedStep) -> StepFidelity:
        """Carry out one recorded step (a tool call or an action of any space) on ``sandbox``
        and set what it gives against the record: the one way replay hands a kind a step.

        The default runs tool calls through ``execute_call`` and compares the outputs after
        ``normalise_output`` (``environments.steps.replay_tool_call``); a step of any other
        action space fails. Kinds with a screen or a device override it for their actions and
        hand the rest to this default. It must not raise for a bad step: the step fails."""
        return await replay_tool_call(self, sandbox, recorded)

    def normalise_output(
        self, text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
    ) -> str:
        """``text``, a recorded or replayed output of ``tool``, with what legitimately changes
        between two executions on the same state masked or put in order (``root``: this
        sandbox's, for replayed outputs). The default applies the rules every kind shares
        (``environments.comparison``: root, line ends, date-times, UUIDs)."""
        return normalise_common(text, root)

    def call_only_reads(self, name: str, arguments: dict[str, Any]) -> bool:
        """Whether the recorded call of tool ``name`` only reads, by its arguments, though the
        tool may write (an SQL query): a diverged or failed such step cannot have changed the
        state. The default is False."""
        return False

    def replays_exclusively(self, trajectory: Trajectory) -> bool:
        """Whether ``trajectory`` must not replay while another trajectory of the same task for
        which this is also true replays (they would fight over something the sandboxes share,
        like cluster-global roles). The default is False."""
        return False

    # -- verifiers, judges, recording ------------------------------------------------------------

    @abstractmethod
    def verifier_inputs(self, sandbox: Sandbox) -> AbstractAsyncContextManager[VerifierInputs]:
        """``async with``: the environment variables, arguments and read-only paths that point
        a task's ``verify.py`` at ``sandbox`` from inside its box (which has no network and sees
        no other host path); files exported and relays opened for it end with the block."""

    @abstractmethod
    def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AbstractAsyncContextManager[list[ToolServer[Any]]]:
        """``async with``: the MCP servers a judge gets on ``sandbox``: its reading tools on a
        read-only view, the writing ones too on a writable clone (``options.writable``); closed
        when the block ends. Kinds read the other ``options`` that concern them."""

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The tool surface the recorded agents used, over a writable ``sandbox`` (scripted
        suites record their agents through it); None when the kind has none."""
        return None

    def prompt_notes(self, task: Task) -> str | None:
        """The template holding the judge's notes on this kind for ``task``, or None: a path
        inside the ``prompts`` package (``subdomains/filesystem.md``), or ``package:path`` for
        a file the kind ships in its own package (``environments.workspace:judge_notes.md``)."""
        return None

    # -- garbage collection ----------------------------------------------------------------------

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """The collectors of what killed runs left in this kind's backends; ``endpoint`` (this
        kind's ``--endpoint``, checked) names an existing server to collect in too, when given.
        The default has none."""
        return ()

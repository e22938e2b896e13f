"""The desktop kind's record: backends, restore policy, verifier inputs, judge servers, leftovers.

Tasks of the ``gui`` domain (Word, Excel and PowerPoint tasks from OSWorld) start from a document
(``DocumentState``) opened in LibreOffice on a desktop of their own, or from an empty desktop.

Backends are the entries of ``DesktopKind.backends``, each a factory returning a
``sandboxes.desktop.sandbox.DesktopProvider``: ``local`` (a bubblewrap box of host processes per
desktop, ``sandboxes.desktop.local``), ``docker`` (a container of the desktop image per desktop,
``sandboxes.desktop.docker``) and ``osworld`` (existing OSWorld VMs reached by URL,
``sandboxes.desktop.osworld``). All of them are driven by the same ``DesktopClient``.

Restoring an end state for each judge goes through the restore hook
(``sandboxes.desktop.sandbox.RestoreMethod``): a fresh desktop with the recorded actions
performed again (``replay``, the default), or a fresh desktop opened on the document as it was
saved (``reopen-files``), chosen per task by ``restore_method_for``.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar, cast, get_args

from dataset.actions import Action, Computer13Action, PyAutoGuiAction
from dataset.models import Task
from environments.desktop.replay import PerformedAction, replay_gui_step
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    ImageRecipe,
    JudgeServerOptions,
    LeftoverSource,
    ProviderFactory,
    VerifierInputs,
    WorkerResources,
)
from environments.steps import RecordedStep, StepFidelity
from mcp_servers.results import ToolArgumentError, ToolResult, ToolSpec
from sandboxes.base import Sandbox, SandboxError, SandboxProvider
from sandboxes.desktop.observations import ObservationKind
from sandboxes.desktop.sandbox import DEFAULT_ACTION_PAUSE, DesktopSandbox
from sandboxes.runs import current_run

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from mcp_servers.serving import ToolServer
    from sandboxes.desktop.client import ImageFormat

GUI_TASKS: frozenset[tuple[str, str]] = frozenset(
    {("gui", "word"), ("gui", "excel"), ("gui", "ppt")}
)
"""The (domain, subdomain) pairs a desktop serves once GUI replay exists."""

REPLAY_PAUSE = DEFAULT_ACTION_PAUSE
"""Seconds replay waits after each action before it watches the screen settle (none: replay
waits for the screen itself, see ``sandboxes.desktop.screens``)."""

RESTORE_METADATA_KEY = "desktop_restore"
"""A task's ``metadata`` entry naming its restore method (``replay`` or ``reopen-files``)."""

DOCUMENT_VARIABLE = "DESKTOP_DOCUMENT"
"""The verifier's variable naming the exported document (the file as the desktop saved it)."""

FILES_VARIABLE = "DESKTOP_FILES_DIR"
"""The verifier's variable naming the folder the desktop's files are exported to."""


def as_desktop_sandbox(sandbox: Sandbox) -> DesktopSandbox:
    """``sandbox`` as a desktop; a sandbox of another kind raises ``TypeError``."""
    if not isinstance(sandbox, DesktopSandbox):
        raise TypeError(f"{sandbox.name} is a {sandbox.kind} sandbox, not a desktop")
    return sandbox


async def _local(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.desktop.local import LocalDesktopProvider

    return LocalDesktopProvider()


async def _docker(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.desktop.docker import DockerDesktopProvider
    from sandboxes.desktop.image import ensure_desktop_image_async

    return DockerDesktopProvider(await ensure_desktop_image_async())


async def _osworld(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.desktop.osworld import OsworldDesktopProvider

    urls = choice.endpoints.get("desktop")
    if not urls:
        raise SandboxError(
            "the desktop kind's osworld backend needs the desktops' URLs "
            "(--endpoint desktop=URL[,URL...])"
        )
    return OsworldDesktopProvider(urls)


async def _cgroups() -> list[str]:
    from sandboxes.desktop.local import collect_desktop_leftovers

    return await collect_desktop_leftovers()


async def _directories() -> list[str]:
    from sandboxes.filesystem.local import collect_local_leftovers

    return await collect_local_leftovers()


def _build_desktop_image(force: bool) -> str:
    from sandboxes.desktop.image import build_desktop_image, desktop_image_size

    tag = build_desktop_image(force=force)
    return f"{tag} ({desktop_image_size(tag) / 2**20:.0f} MiB)"


DESKTOP_IMAGE = ImageRecipe(
    name="desktop",
    build=_build_desktop_image,
    by_default=False,
)
"""LibreOffice on Xvfb with the control server: the image of the ``docker`` backend's desktops."""


class DesktopKind(EnvironmentKind):
    """A LibreOffice desktop, observed by screenshots and accessibility trees and driven by
    mouse and keyboard actions."""

    name: ClassVar[str] = "desktop"
    serve_name: ClassVar[str] = "desktop"
    tasks: ClassVar[frozenset[tuple[str, str]]] = GUI_TASKS
    worker_resources: ClassVar[WorkerResources] = WorkerResources(cpus=0.6, memory_mb=2048)
    """Heavier than the default: a whole desktop session per state. A replaying desktop kept
    0.58 of a core busy on average over the GUI suite's 96 runs (LibreOffice's start, settling
    screens, the comparisons), so ``--jobs auto`` runs three on two cores (at 88 % CPU);
    with 1 CPU each, two left a third of the machine idle."""
    initial_states: ClassVar[frozenset[str]] = frozenset({"document", "empty"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {
        "local": _local,
        "docker": _docker,
        "osworld": _osworld,
    }
    """``local`` (bubblewrap boxes of host processes), ``docker`` (a container of the desktop
    image per desktop; what ``--backend auto`` picks where a Docker engine answers) and
    ``osworld`` (``--endpoint desktop=URL[,URL...]``: existing OSWorld VMs by URL)."""
    endpoint_backend: ClassVar[str | None] = "osworld"

    def check_endpoint(self, endpoint: str) -> str:
        """The control servers' URLs, comma-separated, each checked and normalised (no
        duplicates)."""
        from sandboxes.desktop.osworld import parse_urls

        try:
            return ",".join(parse_urls(endpoint))
        except SandboxError as error:
            raise ValueError(str(error)) from None

    def images(self) -> Sequence[ImageRecipe]:
        """The desktop image (LibreOffice on Xvfb) of its ``docker`` backend: about 1 GB and a few
        minutes to build, so only when the desktop kind is named."""
        return (DESKTOP_IMAGE,)

    def backend_for(self, backend: CommandLineBackend) -> str:
        """``docker`` when asked for, and for ``auto`` where a Docker engine answers (a
        container isolates a desktop best and is the same on every machine; its image is built
        on first use); ``local`` otherwise."""
        if backend == "auto":
            from sandboxes.docker.images import engine_answers

            return "docker" if engine_answers() else "local"
        return "docker" if backend == "docker" else "local"

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """None: GUI agents act with mouse and keyboard actions, not tool calls."""
        return None

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """Refused: a desktop has no tools (its actions go through ``DesktopSandbox.perform``)."""
        raise ToolArgumentError(f"a desktop has no tool {name!r}; GUI steps are actions")

    def restore_method_for(self, task: Task) -> str:
        """How judges get this task's end state: ``task.metadata["desktop_restore"]`` when
        given, else ``replay``. ``reopen-files`` is exact only for tasks whose end state lives
        entirely in the saved document (the agent saved its work; nothing unsaved, no open
        dialog or selection matters to the judgement)."""
        from sandboxes.desktop.sandbox import RESTORE_METHODS

        method = task.metadata.get(RESTORE_METADATA_KEY, "replay")
        if method not in RESTORE_METHODS:
            raise SandboxError(
                f"task {task.id}: metadata.{RESTORE_METADATA_KEY}: unknown restore method "
                f"{method!r} (known: {', '.join(RESTORE_METHODS)})"
            )
        return str(method)

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        """The document as the desktop saved it, exported to a fresh folder (removed
        afterwards) and bound read-only into the verifier's box: ``DESKTOP_DOCUMENT`` names
        the file and ``DESKTOP_FILES_DIR`` its folder."""
        desktop = as_desktop_sandbox(sandbox)
        export = current_run().directory() / current_run().new_name("verify")
        try:
            export.mkdir(mode=0o755)
            environment = {FILES_VARIABLE: str(export)}
            data = await desktop.read_document()
            if desktop.document is not None and data is not None:
                target = export / desktop.document.name
                await asyncio.to_thread(target.write_bytes, data)
                target.chmod(0o644)
                environment[DOCUMENT_VARIABLE] = str(target)
            yield VerifierInputs(environment=environment, read_only=[export])
        finally:
            await asyncio.to_thread(shutil.rmtree, export, True)

    async def replay_step(self, sandbox: Sandbox, recorded: RecordedStep) -> StepFidelity:
        """Mouse and keyboard actions and pyautogui code are performed on the desktop and its
        screen compared with the record (``environments.desktop.replay``); anything else gets
        the default (a desktop has no tools, so it fails)."""
        if isinstance(recorded.step.action, Computer13Action | PyAutoGuiAction):
            return await replay_gui_step(self, sandbox, recorded)
        return await super().replay_step(sandbox, recorded)

    async def perform_action(
        self,
        sandbox: Sandbox,
        action: Action,
        *,
        screenshot: bool,
        tree: bool,
        quiet: float | None = None,
        image_format: ImageFormat = "png",
    ) -> PerformedAction:
        """Perform a recorded action inside the desktop (never on the host) as a restored clone
        does (``DesktopSandbox.perform_settled``: then a screen unchanged for ``quiet`` seconds,
        the provider's default unless given), then take a screenshot and/or the accessibility
        tree as asked (replay asks for what its comparison needs, the screen as raw pixels; the
        GUI suite's recorder for both, the screen as PNG)."""
        desktop = as_desktop_sandbox(sandbox)
        if not isinstance(action, Computer13Action | PyAutoGuiAction):
            raise TypeError(f"a desktop performs no {action.type} actions")
        started = time.perf_counter()
        outcome, screen = await desktop.perform_settled(
            action, pause=REPLAY_PAUSE, quiet=quiet, image_format=image_format
        )
        settled = time.perf_counter()
        seen = await desktop.observe("a11y_tree", token_budget=None) if tree else None
        return PerformedAction(
            status=outcome.status,
            error=(outcome.error or outcome.output) if outcome.status == "failed" else "",
            screenshot=screen if screenshot else None,
            accessibility_tree=seen.accessibility_tree if seen is not None else None,
            seconds=time.perf_counter() - started,
            action_seconds=outcome.seconds,
            settle_seconds=settled - started - outcome.seconds,
            tree_seconds=time.perf_counter() - settled if tree else 0.0,
        )

    async def observe_screen(
        self,
        sandbox: Sandbox,
        *,
        screenshot: bool,
        tree: bool,
        quiet: float = 0.0,
        image_format: ImageFormat = "png",
        changed_within: float | None = None,
    ) -> PerformedAction:
        """The desktop's screen and/or whole accessibility tree as they are now, without acting
        (status ``signal``); with ``quiet``, the screen once it stayed unchanged that long (at
        most ``STILL_TIMEOUT``): replay looks again when a step's screen has not yet come to
        what the record shows. ``changed_within``: the next screen instead, once something was
        drawn after the last look (within that many seconds), no screenshot when nothing was
        (``sandboxes.desktop.screens.wait_for_changed_screen``)."""
        from sandboxes.desktop.screens import wait_for_changed_screen, wait_for_still_screen

        desktop = as_desktop_sandbox(sandbox)
        started = time.perf_counter()
        shot = None
        poll = desktop.provider.settle_poll
        if screenshot and changed_within is not None:
            shot = await wait_for_changed_screen(
                desktop.client,
                within=changed_within,
                quiet=quiet,
                poll=poll,
                image_format=image_format,
            )
        elif screenshot:
            shot = (
                await wait_for_still_screen(
                    desktop.client, quiet=quiet, poll=poll, image_format=image_format
                )
                if quiet
                else await desktop.client.screenshot(image_format)
            )
        settled = time.perf_counter()
        seen = await desktop.observe("a11y_tree", token_budget=None) if tree else None
        return PerformedAction(
            status="signal",
            screenshot=shot,
            accessibility_tree=seen.accessibility_tree if seen is not None else None,
            seconds=time.perf_counter() - started,
            settle_seconds=settled - started,
            tree_seconds=time.perf_counter() - settled if tree else 0.0,
        )

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        """The GUI MCP server (``mcp_servers.desktop``) on the judge's own desktop: a desktop
        cannot be shared, so a read-only judge gets a private one too and the same actions.
        ``options.observation`` is what every answer carries (default: screenshot and tree)."""
        from mcp_servers.desktop import desktop_server

        desktop = as_desktop_sandbox(sandbox)
        observation = options.observation
        if observation is None:
            yield [desktop_server(desktop.client, perform=desktop.perform)]
            return
        known = get_args(ObservationKind)
        if observation not in known:
            raise ValueError(f"no observation {observation!r} (known: {', '.join(known)})")
        yield [
            desktop_server(
                desktop.client,
                perform=desktop.perform,
                observation=cast("ObservationKind", observation),
            )
        ]

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The recorded agents' own action set: the same GUI server, every action remembered
        by the sandbox."""
        from mcp_servers.desktop import desktop_server

        desktop = as_desktop_sandbox(sandbox)
        return desktop_server(desktop.client, perform=desktop.perform)

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """Containers of dead runs (Docker), the memory cgroups of dead runs' local desktops
        (their processes died with bubblewrap), then the run directories holding the desktops'
        folders and socket folders (last)."""
        from environments.leftovers import DOCKER_LEFTOVERS

        return (
            DOCKER_LEFTOVERS,
            LeftoverSource("desktop cgroups", _cgroups, order=20),
            LeftoverSource("directories", _directories, order=900),
        )


KIND = DesktopKind()
"""The registered record (``environments.registry`` names it by module path)."""

"""The unified data model: tasks, trajectories and their steps, for every judged domain.

A ``Task`` says what an agent was asked to do and where it started; a ``Trajectory`` records one
agent's attempt (its ``Step`` list, final answer and ground-truth ``Label``). Every importer
converts into these models and every later layer (replay, MCP servers, judges, bench) reads only
these models, so a new source format costs one importer and nothing else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    NonNegativeInt,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from dataset.actions import Action
from dataset.assets import check_relative_path, check_state_reference
from dataset.domains import domain_names, domain_spec, home_domain

__all__ = [
    "IDENTIFIER_PATTERN",
    "LABEL_SOURCES",
    "PG_DUMP_MAGIC",
    "SANDBOX_ROOT_PLACEHOLDER",
    "AgentStopReason",
    "AgentUsage",
    "AppSnapshotState",
    "ClaimItem",
    "DesktopPath",
    "DirectoryTreeState",
    "DocumentState",
    "Domain",
    "EmptyState",
    "ExternalState",
    "InitialState",
    "Label",
    "LabelSource",
    "LabelValue",
    "Observation",
    "PageArchiveState",
    "Provenance",
    "RelativePath",
    "SqlSeedState",
    "StateFile",
    "StatePath",
    "Step",
    "Task",
    "Trajectory",
    "VerifierRef",
]

SANDBOX_ROOT_PLACEHOLDER = "${SANDBOX_ROOT}"
"""Stands for the filesystem sandbox root in recorded paths; replay substitutes the real root."""

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
"""Task and trajectory ids double as file names, so they are restricted to a safe alphabet."""


def _registered_domain(value: str) -> str:
    return domain_spec(value).name


def _list_domains(schema: dict[str, Any]) -> None:
    schema["enum"] = list(domain_names())


Domain = Annotated[str, AfterValidator(_registered_domain), Field(json_schema_extra=_list_domains)]
"""A registered domain's name (``dataset.domains``), as a task names it."""

LabelValue = Literal["PASS", "FAIL"]

LabelSource = Literal["human", "vote", "verifier", "evaluator", "ground-truth", "unknown"]
"""Who decided a label: ``human`` one person; ``vote`` the majority of several human
annotators (their votes kept); ``verifier`` the task's own programmatic check (an MCPMark
``verify.py``, AndroidWorld's task checker, A3's function evaluator); ``evaluator`` an automatic,
model-based evaluator (SPA-Bench's MLLM evaluator): neither a person nor the task's check;
``ground-truth`` a check of each claim against the data the task was generated from (a suite's
world); ``unknown`` when the source does not say."""

LABEL_SOURCES: tuple[LabelSource, ...] = get_args(LabelSource)
"""Every label source, in the order above."""


RelativePath = Annotated[str, AfterValidator(check_relative_path)]
"""A path relative to the folder of the file that names it, never escaping that folder."""

StatePath = Annotated[str, AfterValidator(check_state_reference)]
"""A file an initial state names: relative to its task's folder, or ``dataset:assets/...``
for a file the whole dataset shares (``dataset.assets``)."""


def _check_desktop_path(value: str) -> str:
    # Runtimes place files at such paths (on a host folder for the local desktop backend), so a
    # ``..`` part could walk out of the desktop's home: refused here, before any replay.
    if not value.startswith("/") or "\x00" in value:
        raise ValueError(f"must be an absolute path without null bytes, got {value!r}")
    if any(part in ("..", ".") for part in value.split("/")):
        raise ValueError(f"must not have '.' or '..' parts, got {value!r}")
    if value.endswith("/"):
        raise ValueError(f"must name a file, got {value!r}")
    return value


DesktopPath = Annotated[str, AfterValidator(_check_desktop_path)]
"""An absolute path on a recorded desktop, without ``.`` or ``..`` parts."""

Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


# --- initial states -------------------------------------------------------------------------


class StateFile(NamedTuple):
    """A file or folder an initial state names, which must exist in its task's folder."""

    field: str
    """The state's field that names it (``path``, ``preparation``)."""
    path: str
    """Where it is: relative to the task folder, or ``dataset:assets/...`` (``dataset.assets``)."""
    expected: Literal["dir", "file", "any"]
    """What it must be: a folder, a file, or either."""


class _State(_Model):
    def files(self) -> list[StateFile]:
        """The files and folders this state names (none by default)."""
        return []


class DirectoryTreeState(_State):
    """A directory tree that is copied into a fresh filesystem sandbox."""

    kind: Literal["directory_tree"] = "directory_tree"
    """Discriminator of the initial-state union."""

    path: StatePath = "initial"
    """The tree's folder, relative to the task folder."""

    def files(self) -> list[StateFile]:
        return [StateFile("path", self.path, "dir")]


PG_DUMP_MAGIC = b"PGDMP"
"""The first bytes of a ``pg_dump`` custom-format archive (a seed that is not SQL)."""


class SqlSeedState(_State):
    """A database built from an empty one: a seed (a SQL script or a ``pg_dump`` archive), then
    optionally a preparation script, under a chosen collation."""

    kind: Literal["sql_seed"] = "sql_seed"
    """Discriminator of the initial-state union."""

    path: StatePath | None = "seed.sql"
    """The seed, relative to the task folder: plain SQL, or a ``pg_dump`` custom-format archive
    (recognised by its first bytes); None starts from an empty database."""

    preparation: RelativePath | None = None
    """A Python script run after the seed against the new database, as MCPMark runs a task's
    ``prepare_environment.py``: in the dataset-code box, with the ``POSTGRES_*`` variables of a
    role that owns the database; relative to the task folder (never shared: it runs in the task
    folder, the only one its box shows). Exit code 0 means it worked."""

    collation: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.@-]+$")] | None = None
    """The database's default collation, as Postgres names collations: a libc locale (``C``,
    ``C.UTF-8``, ``en_US.utf8``) or an ICU one (``en-US-x-icu``, ``und-x-icu``). None: the
    server's default. Text sorts differently under each, so it is recorded with the run."""

    server_roles: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")]] | None = (
        None
    )
    """Roles the recording's server had before the task began, made (without login or
    privileges) where the replaying server lacks them: Supabase's ``anon``, ``authenticated``
    and ``service_role``, which its migrations and policies name."""

    @model_serializer(mode="wrap")
    def _keep_missing_seed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Written datasets leave out None fields, and an absent path means "seed.sql".
        data: dict[str, Any] = handler(self)
        if self.path is None:
            data["path"] = None
        return data

    @model_validator(mode="after")
    def _something_to_build(self) -> SqlSeedState:
        if (
            self.path is None
            and self.preparation is None
            and self.collation is None
            and not self.server_roles
        ):
            raise ValueError(
                "a sql_seed state without a seed, a preparation or a collation is"
                " an empty state: use kind 'empty'"
            )
        return self

    def files(self) -> list[StateFile]:
        named = (("path", self.path), ("preparation", self.preparation))
        return [StateFile(name, value, "file") for name, value in named if value is not None]


class DocumentState(_State):
    """An office document opened on a desktop before the agent started."""

    kind: Literal["document"] = "document"
    """Discriminator of the initial-state union."""

    path: StatePath
    """The document file, relative to the task folder."""

    application: Literal["impress", "writer", "calc"] | None = None
    """The LibreOffice application that opens it; inferred from the extension when absent."""

    open_at: DesktopPath | None = None
    """Where the document lived on the agent's desktop (e.g. ``/home/user/report.docx``)."""

    def files(self) -> list[StateFile]:
        return [StateFile("path", self.path, "file")]


class AppSnapshotState(_State):
    """A saved state of a device or app (an emulator snapshot or per-app data archive)."""

    kind: Literal["app_snapshot"] = "app_snapshot"
    """Discriminator of the initial-state union."""

    path: StatePath | None = None
    """The snapshot file or folder inside the task folder, when it is bundled."""

    apps: StatePath | None = None
    """The apps folder of a web snapshot when it is not the snapshot folder's own ``apps/``:
    typically ``dataset:assets/...``, one copy the dataset's tasks share."""

    snapshot_name: str | None = None
    """The name of an emulator snapshot to load, when the snapshot lives with the emulator."""

    packages: list[str] = Field(default_factory=list)
    """Android packages whose data the snapshot covers."""

    @model_validator(mode="after")
    def _one_source(self) -> AppSnapshotState:
        if self.path is None and self.snapshot_name is None:
            raise ValueError("an app snapshot needs a path or a snapshot_name")
        return self

    def files(self) -> list[StateFile]:
        named = [] if self.path is None else [StateFile("path", self.path, "any")]
        if self.apps is not None:
            named.append(StateFile("apps", self.apps, "dir"))
        return named


class PageArchiveState(_State):
    """Archived web pages served in place of the live web."""

    kind: Literal["page_archive"] = "page_archive"
    """Discriminator of the initial-state union."""

    path: StatePath
    """The archive (a folder of pages or a single archive file), relative to the task folder."""

    start_url: str | None = None
    """The page the agent started on, if any."""

    def files(self) -> list[StateFile]:
        return [StateFile("path", self.path, "any")]


class EmptyState(_State):
    """Nothing to restore: an empty sandbox, or the live web for search tasks."""

    kind: Literal["empty"] = "empty"
    """Discriminator of the initial-state union."""


class ExternalState(_State):
    """A starting state that exists outside the dataset and must be supplied to replay it."""

    kind: Literal["external"] = "external"
    """Discriminator of the initial-state union."""

    reference: str = Field(min_length=1)
    """What the state is and where it came from, e.g. an MCPMark environment name."""


InitialState = Annotated[
    DirectoryTreeState
    | SqlSeedState
    | DocumentState
    | AppSnapshotState
    | PageArchiveState
    | EmptyState
    | ExternalState,
    Field(discriminator="kind"),
]
"""Where an agent started; the ``kind`` field selects the variant."""


class VerifierRef(_Model):
    """A rule-based checker shipped with the task (MCPMark contract: exit code 0 means PASS)."""

    path: RelativePath = "verify.py"
    """The verifier script, relative to the task folder."""

    timeout_seconds: float = Field(default=120.0, gt=0)
    """How long the verifier may run before it counts as failed."""


class Task(_Model):
    """What an agent was asked to do, where it started, and how success can be checked."""

    id: Identifier
    """Unique task id; also the name of the task's folder."""

    domain: Domain
    """The family of environment, a registered domain (``dataset.domains``): ``ds``, ``gui``,
    ``mobile``, ``search``, ..."""

    subdomain: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$")]
    """The environment within the domain: ``filesystem``, ``postgres``, ``ppt``, ``android``, ..."""

    instruction: str = Field(min_length=1)
    """The instruction as the agent received it."""

    initial_state: InitialState
    """The state the agent started from."""

    verifier: VerifierRef | None = None
    """The task's own checker, if it has one."""

    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """Free-form facts from the source (category, difficulty, tags, ...)."""

    @model_validator(mode="after")
    def _subdomain_fits_domain(self) -> Task:
        home = home_domain(self.subdomain)
        if home is not None and home != self.domain:
            raise ValueError(
                f"subdomain {self.subdomain!r} belongs to domain {home!r}, not {self.domain!r}"
            )
        return self


# --- trajectories ---------------------------------------------------------------------------


class Observation(_Model):
    """What the agent saw after an action."""

    text: str | None = None
    """The textual result (a tool's output, an error message, an agent-visible log line)."""

    screenshot: RelativePath | None = None
    """A screenshot file, relative to the folder holding the trajectory file."""

    screenshot_variants: list[RelativePath] | None = None
    """Other screenshots of the same state, which the application draws one way or another
    from run to run (a dialog's column widths, a status bar updated late), each accepted by a
    person who compared it with ``screenshot``; relative like it. Replay counts a screen that
    matches one of them as matching the record; judges are only ever shown ``screenshot``. None
    (left out of the file) when there are none."""

    accessibility_tree: str | None = None
    """The accessibility tree or UI element list the agent received, as text."""

    url: str | None = None
    """The page address, for browser and web agents."""


class Step(_Model):
    """One action of the agent and what came back."""

    index: int = Field(ge=1)
    """Position in the trajectory, counting from 1 without gaps."""

    action: Action
    """What the agent did; one of the four action spaces."""

    observation: Observation | None = None
    """What the agent saw afterwards; absent when the source recorded no result."""

    is_error: bool = False
    """Whether the environment reported the action as failed."""

    reasoning: str | None = None
    """The agent's own text that came with (or just before) this action."""

    started_at: datetime | None = None
    """When the action was issued, if recorded."""

    ended_at: datetime | None = None
    """When its result arrived, if recorded."""


class Label(_Model):
    """The ground truth: did the trajectory accomplish its task."""

    value: LabelValue
    """``PASS`` if the task was accomplished, else ``FAIL``."""

    source: LabelSource = "unknown"
    """Who decided (``LabelSource``); ``unknown`` when the source does not say."""

    verifier_output: str | None = None
    """The verifier's own output at labelling time; explains a label that later disagrees."""

    error_message: str | None = None
    """Any error the source reported for the run (e.g. a crashed verification)."""

    votes: dict[str, LabelValue] = Field(default_factory=dict)
    """Each voter's verdict, when ``source`` is ``vote``."""


class ClaimItem(_Model):
    """One single-item claim of a search answer, judged and scored on its own."""

    id: str = Field(min_length=1)
    """Identifier unique within the trajectory."""

    text: str = Field(min_length=1)
    """The claim as extracted from the final answer."""

    label: LabelValue | None = None
    """Ground truth for this claim, if labelled."""

    sources: list[str] = Field(default_factory=list)
    """Addresses the answer cited for this claim."""


class AgentUsage(_Model):
    """Token counts the agent spent, as recorded by the source."""

    input_tokens: NonNegativeInt | None = None
    """Prompt tokens over the whole run."""

    output_tokens: NonNegativeInt | None = None
    """Completion tokens over the whole run."""

    total_tokens: NonNegativeInt | None = None
    """Total tokens as the source reported them."""

    reasoning_tokens: NonNegativeInt | None = None
    """Hidden reasoning tokens, for models that report them."""


class Provenance(_Model):
    """Where a trajectory came from, so any field can be traced to its source."""

    source_format: str = Field(min_length=1)
    """The format it was imported from: ``native``, ``mcpmark``, ``osworld``, ..."""

    source_path: str | None = None
    """The file or run folder it was read from, as given to the importer."""

    details: dict[str, JsonValue] = Field(default_factory=dict)
    """Source facts with no field of their own (experiment name, run number, ...)."""


AgentStopReason = Literal["completed", "turn_limit", "error", "unknown"]
"""How the recorded agent's run ended: its own final answer, its turn cap, an error, or not
recorded."""


class Trajectory(_Model):
    """One recorded attempt of an agent at a task, with its ground-truth label."""

    id: Identifier
    """Unique trajectory id; also the trajectory's file name without ``.json``."""

    task_id: Identifier
    """The task attempted; must name a task of the same dataset."""

    agent: str = Field(min_length=1)
    """The agent (policy or framework) that produced the run."""

    model: str | None = None
    """The model behind the agent, if known."""

    tool_server: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")] | None = None
    """The implementation of the tool server the agent called, where a subdomain has several
    with different tools and outputs: ``postgres-mcp``, ``supabase`` or ``insforge`` for
    ``ds/postgres``, ``filesystem`` for the reference filesystem server. Replay answers each call
    as this server did; absent means the subdomain's usual server."""

    initial_state: InitialState | None = None
    """Where this run started when that differs from its task's ``initial_state``: e.g. the same
    database under the collation of the server the agent used. Replay starts from it; absent
    means the task's."""

    steps: list[Step] = Field(default_factory=list)
    """The actions in the order they were taken."""

    final_response: str | None = None
    """The agent's last message to the user; absent when the run ended without one."""

    label: Label | None = None
    """Ground truth; absent for unlabelled trajectories, which can be judged but not scored."""

    items: list[ClaimItem] = Field(default_factory=list)
    """Single-item claims for item-level scoring (search domain); empty elsewhere."""

    stop_reason: AgentStopReason = "unknown"
    """How the agent's run ended: its own final answer, its turn cap, or an error."""

    turn_count: NonNegativeInt | None = None
    """Model turns the agent used, as the source counted them."""

    usage: AgentUsage | None = None
    """Tokens the agent spent, if recorded."""

    started_at: datetime | None = None
    """When the run began."""

    ended_at: datetime | None = None
    """When the run ended."""

    provenance: Provenance = Field(default_factory=lambda: Provenance(source_format="native"))
    """Where this record came from."""

    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """Free-form facts with no field of their own."""

    @field_validator("steps")
    @classmethod
    def _steps_are_numbered(cls, steps: list[Step]) -> list[Step]:
        for position, step in enumerate(steps, start=1):
            if step.index != position:
                raise ValueError(
                    f"steps[{position - 1}].index is {step.index}, expected {position}: "
                    "steps are numbered from 1 without gaps"
                )
        return steps

    @field_validator("items")
    @classmethod
    def _item_ids_are_unique(cls, items: list[ClaimItem]) -> list[ClaimItem]:
        ids = [item.id for item in items]
        duplicated = sorted({item_id for item_id in ids if ids.count(item_id) > 1})
        if duplicated:
            raise ValueError(f"duplicate item ids: {', '.join(duplicated)}")
        return items

    @property
    def screenshots(self) -> list[str]:
        """Every screenshot path the steps refer to, in step order."""
        return [
            step.observation.screenshot
            for step in self.steps
            if step.observation is not None and step.observation.screenshot is not None
        ]

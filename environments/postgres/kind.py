"""The postgres kind's record: backends, replay, verifier inputs, judge servers, leftovers.

Tasks of ``ds/postgres`` start from an SQL seed (or an empty database) and replay into a database
cloned from a per-task template, in a cluster the run starts (``embedded``, ``docker``) or one it
is given (``external``, ``--dsn``). Recorded calls are the agents' SQL tools, each on its own
connection and committed on its own, as the sandbox's own role (never the cluster's
administrator; see ``sandboxes.postgres.roles``). That role owns the objects an agent recorded as
the server's administrator owned, so a replayed answer shows the administrator's name where it
names the roles standing in for it. Roles are cluster-global, so trajectories whose SQL may
manage roles replay one at a time per task. Heavy modules (asyncpg, the tools, the Docker client)
are imported when a hook needs them.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from pydantic import PositiveFloat

from dataset.actions import ToolCallAction
from dataset.models import InitialState, SqlSeedState, Task, Trajectory
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    ImageRecipe,
    JudgeServerOptions,
    KindOptions,
    LeftoverSource,
    ProviderFactory,
    VerifierInputs,
    WorkerResources,
)
from environments.postgres.comparison import is_query, normalise_sql_output
from environments.steps import RecordedStep, StepFidelity
from mcp_servers.results import ToolResult, ToolSpec
from mcp_servers.sql.statements import sql_text
from sandboxes.base import Sandbox, SandboxError, SandboxProvider
from sandboxes.postgres.sandbox import PostgresCluster, PostgresSandbox

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from mcp_servers.serving import ToolServer

logger = logging.getLogger(__name__)


def as_postgres_sandbox(sandbox: Sandbox) -> PostgresSandbox:
    """``sandbox`` as a Postgres sandbox; a sandbox of another kind raises ``TypeError``."""
    if not isinstance(sandbox, PostgresSandbox):
        raise TypeError(f"{sandbox.name} is a {sandbox.kind} sandbox, not a postgres one")
    return sandbox


class PostgresOptions(KindOptions):
    """The postgres kind's settings (``--kind-option postgres.FIELD=VALUE``)."""

    seed_timeout: PositiveFloat | None = None
    """Seconds one task's seed, and then its preparation, may run; a task whose preparation
    fails or runs over fails all its trajectories at once. None: 600."""
    superuser_steps: Literal["private-server", "refuse"] = "private-server"
    """What replay does with a trajectory whose recorded SQL acts as the recording server's
    superuser (``SET ROLE postgres``): ``private-server`` replays it in a throwaway server of
    its own with no network (docker backend only; elsewhere those steps are refused, saying
    why); ``refuse`` refuses those steps on every backend."""


async def _on_cluster(cluster: PostgresCluster, choice: BackendChoice) -> SandboxProvider:
    from sandboxes.postgres.provider import ClusterPostgresProvider
    from sandboxes.postgres.seeding import DEFAULT_SEED_TIMEOUT

    options = cast("PostgresOptions", choice.options_for(KIND))
    await cluster.start()
    provider = ClusterPostgresProvider(
        cluster, seed_timeout=options.seed_timeout or DEFAULT_SEED_TIMEOUT
    )
    _SUPERUSER_STEPS[provider] = options.superuser_steps
    return provider


async def _embedded(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.postgres.embedded import EmbeddedPostgresCluster

    return await _on_cluster(EmbeddedPostgresCluster(), choice)


async def _external(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.postgres.external import ExternalPostgresCluster

    dsn = choice.endpoints.get(KIND.name)
    if not dsn:
        raise SandboxError("the external Postgres backend needs a DSN (--endpoint postgres=DSN)")
    return await _on_cluster(ExternalPostgresCluster(dsn), choice)


async def _docker(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.docker.images import ensure_sandbox_image_async
    from sandboxes.postgres.docker_cluster import DockerPostgresCluster

    await ensure_sandbox_image_async()  # builds it once (minutes), then cached by tag
    return await _on_cluster(DockerPostgresCluster(), choice)


_SUPERUSER_STEPS: weakref.WeakKeyDictionary[SandboxProvider, str] = weakref.WeakKeyDictionary()
"""The ``superuser_steps`` option each provider the backends started was given."""

_NOT_MOVED: weakref.WeakKeyDictionary[Sandbox, str] = weakref.WeakKeyDictionary()
"""Why a sandbox whose trajectory needs the superuser stayed in the shared server."""


def _superuser_needs(trajectory: Trajectory | None) -> set[str]:
    """The superuser roles the recorded SQL of ``trajectory`` switches to (none: empty)."""
    from sandboxes.postgres.roles import superuser_roles

    if trajectory is None:
        return set()
    return {
        role
        for step in trajectory.steps
        if isinstance(step.action, ToolCallAction)
        for role in superuser_roles(sql_text(step.action.arguments))
    }


def _refusal_reason(sandbox: PostgresSandbox) -> str:
    """Why ``sandbox`` may not run a recorded superuser step."""
    from sandboxes.postgres.private import DOCKER_ONLY
    from sandboxes.postgres.provider import ClusterPostgresSandbox

    if sandbox in _NOT_MOVED:
        return _NOT_MOVED[sandbox]
    if isinstance(sandbox, ClusterPostgresSandbox):
        if _SUPERUSER_STEPS.get(sandbox.provider) == "refuse":
            return "the postgres option superuser_steps is 'refuse'"
        return f"this replay runs on the {sandbox.provider.cluster.backend} backend: {DOCKER_ONLY}"
    return DOCKER_ONLY


def _may_act_as_superuser(sandbox: PostgresSandbox) -> bool:
    from sandboxes.postgres.provider import ClusterPostgresSandbox

    return (
        isinstance(sandbox, ClusterPostgresSandbox)
        and sandbox.on_private_server
        and not sandbox.read_only
    )


async def _isolate(sandbox: PostgresSandbox, roles: set[str]) -> None:
    """Move ``sandbox`` to a throwaway server of its own (``sandboxes.postgres.private``)
    unless its provider's option says refuse; remember why when it stays."""
    from sandboxes.postgres.private import move_to_private_server
    from sandboxes.postgres.provider import ClusterPostgresSandbox

    if not isinstance(sandbox, ClusterPostgresSandbox) or sandbox.on_private_server:
        return
    if _SUPERUSER_STEPS.get(sandbox.provider) == "refuse":
        return
    try:
        await move_to_private_server(sandbox, sorted(roles))
    except SandboxError as error:
        _NOT_MOVED[sandbox] = str(error)
    except Exception as error:  # a Docker or server failure: the trajectory still replays
        _NOT_MOVED[sandbox] = (
            f"its throwaway server could not be made: {type(error).__name__}: {error}"
        )


def _as_administrator(result: ToolResult, sandbox: PostgresSandbox) -> ToolResult:
    """``result`` as the recorded administrator would have seen it (``as_administrator``);
    where the server withholds role management, its refusal explained."""
    from sandboxes.postgres.provider import ClusterPostgresSandbox
    from sandboxes.postgres.roles import explain_role_error

    text = sandbox.as_administrator(result.text)
    if result.is_error and isinstance(sandbox, ClusterPostgresSandbox):
        text = explain_role_error(text, sandbox.server_version)
    return result if text == result.text else result.model_copy(update={"text": text})


async def _embedded_servers() -> list[str]:
    from sandboxes.postgres.leftovers import collect_embedded_leftovers

    return await collect_embedded_leftovers()


def _external_server(dsn: str) -> LeftoverSource:
    async def collect() -> list[str]:
        from sandboxes.postgres.external import ExternalPostgresCluster
        from sandboxes.postgres.leftovers import collect_postgres_leftovers

        return await collect_postgres_leftovers(ExternalPostgresCluster(dsn).admin)

    return LeftoverSource("external-postgres", collect, order=0)


_TASK_ROLES = """
SELECT r.rolname FROM pg_roles r
WHERE r.oid IN (
        SELECT refobjid FROM pg_shdepend
        WHERE refclassid = 'pg_authid'::regclass
          AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))
  AND r.oid >= 16384 AND r.rolname <> $1
  AND NOT (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls)
  -- SET ROLE needs a chain of grants with SET (16+); the inherited seed role's is without it
  AND NOT CASE WHEN current_setting('server_version_num')::int >= 160000
               THEN pg_has_role($1, r.oid, 'SET') ELSE pg_has_role($1, r.oid, 'MEMBER') END
ORDER BY r.rolname
"""
"""The plain roles holding privileges, policies or objects in the current database that the
owner role ``$1`` may not yet ``SET ROLE`` to."""


@asynccontextmanager
async def _task_roles(database: PostgresSandbox, owner: str) -> AsyncIterator[None]:
    """Let ``owner`` act as the plain roles of ``database`` for the block (verifiers check a
    role's rights with ``SET ROLE``, which needs membership); revoked when the block ends."""
    import asyncpg

    from sandboxes.postgres import admin

    async with database.connect() as conn:
        names = [row["rolname"] for row in await conn.fetch(_TASK_ROLES, owner)]
    granted: list[str] = []
    try:
        for name in names:
            statement = f"GRANT {admin.quote_ident(name)} TO {admin.quote_ident(owner)}"
            async with database.connect(statement) as conn:
                try:
                    await conn.execute(statement)
                except asyncpg.PostgresError as error:
                    logger.warning("%s: verifier cannot act as %s: %s", database.name, name, error)
                    continue
            granted.append(name)
        yield
    finally:
        for name in granted:
            statement = f"REVOKE {admin.quote_ident(name)} FROM {admin.quote_ident(owner)}"
            async with database.connect(statement) as conn:
                await conn.execute(statement)


_MANAGED_ROLE = """
SELECT NOT (r.rolsuper OR r.rolreplication OR r.rolbypassrls)
       AND pg_has_role(current_user, r.oid, 'MEMBER')
FROM pg_roles r
WHERE r.rolname = $1 AND r.rolname <> current_user
"""
"""Whether the role ``$1`` is one the current (owner) role manages: a member of its own lineage's
roles (made by its seed, its preparation or by itself), never a privileged one."""


def _managed_roles(database: PostgresSandbox) -> Callable[[str], Awaitable[bool]]:
    """The relay's check for roles besides the owner: a role the owner manages is admitted, and
    may connect to the sandbox's database from then on (MCPMark's databases let every role
    connect; a verifier logs in as a role it made to test that role's rights)."""
    from sandboxes.postgres import admin

    async def admits(role: str) -> bool:
        async with database.connect() as conn:
            if not await conn.fetchval(_MANAGED_ROLE, role):
                return False
            name = (await database.owner_connection()).database
            await conn.execute(
                f"GRANT CONNECT ON DATABASE {admin.quote_ident(name)} TO {admin.quote_ident(role)}"
            )
        return True

    return admits


class PostgresKind(EnvironmentKind):
    """One database, reached through the agents' SQL tools and the judges' SQL server."""

    name: ClassVar[str] = "postgres"
    serve_name: ClassVar[str] = "sql"
    tasks: ClassVar[frozenset[tuple[str, str]]] = frozenset({("ds", "postgres")})
    worker_resources: ClassVar[WorkerResources] = WorkerResources(cpus=0.5, memory_mb=512)
    """Heavier than the default: a Postgres server per worker."""
    initial_states: ClassVar[frozenset[str]] = frozenset({"sql_seed", "empty"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {
        "embedded": _embedded,
        "external": _external,
        "docker": _docker,
    }

    endpoint_backend: ClassVar[str | None] = "external"
    """A DSN (``--endpoint postgres=DSN``) selects the server it names."""
    options_model: ClassVar[type[KindOptions]] = PostgresOptions

    def backend_for(self, backend: CommandLineBackend) -> str:
        """``docker``: a Postgres container; else ``embedded`` (a server from the pgserver
        wheel)."""
        return "docker" if backend == "docker" else "embedded"

    def check_endpoint(self, endpoint: str) -> str:
        """A ``postgresql://`` URL or a libpq ``key=value`` string that parses."""
        from sandboxes.postgres.external import parse_dsn

        try:
            parse_dsn(endpoint.strip())
        except SandboxError as error:
            raise ValueError(str(error)) from None
        return endpoint.strip()

    def images(self) -> Sequence[ImageRecipe]:
        """The sandbox image its ``docker`` backend runs the server in."""
        from environments.images import SANDBOX_IMAGE

        return (SANDBOX_IMAGE,)

    def supplied_state(self, state: InitialState, supplied: Path) -> InitialState:
        """A supplied SQL script or ``pg_dump`` archive is the prepared database: it replaces the
        seed and the preparation, and keeps the collation."""
        if not supplied.is_file():
            raise SandboxError(f"{supplied}: a postgres environment must be a seed file")
        collation = state.collation if isinstance(state, SqlSeedState) else None
        return SqlSeedState(path=supplied.name, collation=collation)

    async def close_provider(self, provider: SandboxProvider) -> None:
        """Close the provider (dropping its databases and roles), then stop its cluster (an
        external server is left running)."""
        from sandboxes.postgres.provider import ClusterPostgresProvider

        try:
            await provider.aclose()
        finally:
            if isinstance(provider, ClusterPostgresProvider):
                await provider.cluster.stop()

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """The agents' SQL tool ``name`` (postgres-mcp, Supabase, InsForge); every tool that
        runs SQL text counts as writing."""
        from mcp_servers.sql.agent_tools import SQL_TOOLS

        return SQL_TOOLS.get(name)

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """The call on a fresh connection of its own as the sandbox role, committed on its own.
        Where the answer names the runtime's roles that own what the recorded administrator
        owned, it shows the administrator's name instead. A call acting as the recording's
        superuser (``SET ROLE postgres``) runs only in a throwaway server of the sandbox's own
        (see ``replay_step``); elsewhere it is refused with the reason, never run."""
        from mcp_servers.sql.agent_tools import call_sql_tool
        from sandboxes.postgres.roles import SUPERUSER_REFUSED, superuser_switch

        database = as_postgres_sandbox(sandbox)
        switch = superuser_switch(sql_text(arguments))
        if switch is not None and not _may_act_as_superuser(database):
            reason = _refusal_reason(database)
            return ToolResult(
                text=SUPERUSER_REFUSED.format(switch=switch, reason=reason), is_error=True
            )
        async with database.connect(sql_text(arguments) or None) as connection:
            result = await call_sql_tool(connection, name, arguments)
        return _as_administrator(result, database)

    async def replay_step(self, sandbox: Sandbox, recorded: RecordedStep) -> StepFidelity:
        """Replay as every kind does, except for trajectories whose recorded SQL acts as the
        recording server's superuser (``SET ROLE postgres``): before their first step the
        sandbox moves to a throwaway server of its own with no network, where those steps run
        as recorded (docker backend, option ``superuser_steps=private-server``). Where that
        cannot be, each such step fails, naming the step and why, and is not run."""
        from sandboxes.postgres.roles import superuser_switch

        trajectory = recorded.trajectory
        roles = _superuser_needs(trajectory)
        if not roles or not isinstance(recorded.step.action, ToolCallAction):
            return await super().replay_step(sandbox, recorded)
        database = as_postgres_sandbox(sandbox)
        if trajectory is not None and recorded.step.index == trajectory.steps[0].index:
            await _isolate(database, roles)
        fidelity = await super().replay_step(database, recorded)
        switch = superuser_switch(sql_text(recorded.step.action.arguments))
        if switch is not None and not _may_act_as_superuser(database):
            fidelity.status = "failed"
            fidelity.message = (
                f"{recorded.position}: refused: the recorded SQL acts as the recording server's"
                f" superuser ({switch}); {_refusal_reason(database)}"
            )
        return fidelity

    def normalise_output(
        self, text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
    ) -> str:
        """The shared rules and the SQL servers' own (``environments.postgres.comparison``:
        constraint OIDs, unordered rows, InsForge's hosted-service parts)."""
        return normalise_sql_output(text, tool=tool, arguments=arguments, root=root)

    def call_only_reads(self, name: str, arguments: dict[str, Any]) -> bool:
        """Whether the call's SQL is a plain query (``environments.postgres.comparison``)."""
        return is_query(sql_text(arguments))

    def replays_exclusively(self, trajectory: Trajectory) -> bool:
        """True when any recorded SQL may create, rename or drop roles (cluster-global names)."""
        from sandboxes.postgres.roles import may_touch_roles

        return any(
            isinstance(step.action, ToolCallAction)
            and may_touch_roles(sql_text(step.action.arguments))
            for step in trajectory.steps
        )

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        """``POSTGRES_*`` and ``DATABASE_URL`` for the sandbox's database, and its name as the
        first argument, reached through a relay whose socket folder is bound into the box.

        The role is the sandbox's own: its owner role on a writable sandbox (no superuser, no
        other database), the reader role on a read-only view; never the cluster's administrator.
        """
        from sandboxes.postgres.relay import postgres_relay

        database = as_postgres_sandbox(sandbox)
        if database.read_only:
            info = database.connection
            roles: AbstractAsyncContextManager[None] = contextlib.nullcontext()
            others = None
        else:
            info = await database.owner_connection()
            roles = _task_roles(database, info.user)
            others = _managed_roles(database)
        async with roles, postgres_relay(info, others=others) as relayed:
            yield VerifierInputs(
                environment=relayed.info.verifier_environment(),
                arguments=[relayed.info.database],
                read_only=relayed.bind,
            )

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        """The SQL server: ``unrestricted`` as the clone's owner on a writable clone, else
        ``read-only`` as the view's reader role."""
        from mcp_servers.sql.judge_server import sql_server

        server = sql_server(
            as_postgres_sandbox(sandbox), access="unrestricted" if options.writable else "read-only"
        )
        try:
            yield [server]
        finally:
            await server.context.aclose()

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The agents' SQL tools with their recorded output (``mcp_servers.sql.agent_server``)."""
        from mcp_servers.sql.agent_server import agent_sql_server

        return agent_sql_server(as_postgres_sandbox(sandbox))

    def prompt_notes(self, task: Task) -> str | None:
        """``prompts/subdomains/postgres.md``."""
        return "subdomains/postgres.md"

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """Databases and roles of dead runs in the external server ``endpoint`` (a DSN; first),
        containers (Docker), then the embedded servers of dead runs."""
        from environments.leftovers import DOCKER_LEFTOVERS

        sources = [DOCKER_LEFTOVERS, LeftoverSource("embedded-postgres", _embedded_servers, 20)]
        if endpoint:
            sources.insert(0, _external_server(endpoint))
        return sources


KIND = PostgresKind()
"""The registered record (``environments.registry`` names it by module path)."""

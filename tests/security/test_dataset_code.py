"""Hostile ``verify.py`` files in real task folders, run through ``run_verifier`` on real
sandboxes: local and Docker filesystem trees, embedded and Docker Postgres.

Each test plants what a hostile dataset would ship and checks the walls of the verifier's box:
nothing written outside it, no secret of the runtime seen, no process left, no network, no
superuser, bounded memory and output, and a clear report when it is killed for time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
import pytest_asyncio

from dataset.models import Task, Trajectory, VerifierRef
from environments.backends import BackendChoice, ProviderSet
from environments.kind import EnvironmentKind
from environments.registry import kind_for_task
from replay.report import VerifierRun
from replay.runner import REPORT_FILE, replay_dataset
from replay.verifier import OUTPUT_LIMIT, run_verifier
from sandboxes.base import Sandbox
from sandboxes.confinement import LOG_HEAD_BYTES, TAIL_BYTES, ConfinementError
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresSandbox
from sandboxes.runs import current_run
from tests.replay.builders import FS_TASK, MINI, PG_TASK, build_dataset

NO_SUCH_FILE = "No such file or directory"

module_loop = pytest.mark.asyncio(loop_scope="module")

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]

SECRET_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=BACKENDS)
async def providers(request: pytest.FixtureRequest) -> AsyncIterator[ProviderSet]:
    """Providers on one backend (local tree + embedded Postgres, or containers for both)."""
    if request.param == "docker":
        from sandboxes.docker.images import ensure_sandbox_image

        ensure_sandbox_image()
    async with ProviderSet(BackendChoice.for_backend(request.param)) as made:
        yield made


def hostile_task(root: Path, task_id: str, verifier: str, timeout: float = 60) -> tuple[Task, Path]:
    """A copy of a mini example task whose ``verify.py`` is ``verifier``, readable by anyone
    (as a dataset checked out with the usual umask is)."""
    task_dir = root / task_id
    shutil.copytree(MINI / "tasks" / task_id, task_dir)
    (task_dir / "verify.py").write_text(textwrap.dedent(verifier))
    for folder, _, files in os.walk(root):
        Path(folder).chmod(0o755)
        for name in files:
            Path(folder, name).chmod(0o644)
    root.chmod(0o755)
    task = Task.model_validate_json((task_dir / "task.json").read_text())
    return task.model_copy(update={"verifier": VerifierRef(timeout_seconds=timeout)}), task_dir


async def sandbox_for(
    providers: ProviderSet, task: Task, task_dir: Path
) -> tuple[EnvironmentKind, Sandbox]:
    """The task's kind and a fresh sandbox of it."""
    kind = kind_for_task(task)
    assert kind is not None
    provider = await providers.get(kind.name)
    return kind, await provider.create(task, task_dir)


async def verify(providers: ProviderSet, task: Task, task_dir: Path) -> tuple[VerifierRun, Sandbox]:
    """Build the task's sandbox, run its verifier, and hand back the live sandbox."""
    kind, sandbox = await sandbox_for(providers, task, task_dir)
    return await run_verifier(kind, task, task_dir, sandbox), sandbox


def processes_with(marker: str) -> list[psutil.Process]:
    """Live processes (not zombies, not this one) whose command line holds ``marker``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.pid == os.getpid() or process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if marker in " ".join(process.info["cmdline"] or []):
            found.append(process)
    return found


def last_json(run: VerifierRun) -> dict[str, str]:
    found: dict[str, str] = json.loads(run.output.strip().splitlines()[-1])
    return found


async def tree_listing(kind: EnvironmentKind, sandbox: Sandbox) -> str:
    """The sandbox tree as the filesystem tools see it (local and Docker alike)."""
    root = kind.sandbox_root(sandbox)
    listed = await kind.execute_call(sandbox, "directory_tree", {"path": root})
    assert not listed.is_error, listed.text
    return listed.text


WRITER = """\
import json, os, pathlib
targets = {targets}
tree = os.environ.get("FILESYSTEM_TEST_DIR")
if tree:
    targets["tree"] = os.path.join(tree, "planted.txt")
results = {{}}
for name, path in targets.items():
    try:
        pathlib.Path(path).write_text("planted by a verifier")
        results[name] = "written"
    except OSError as error:
        results[name] = error.strerror
for name, path in {removals}.items():
    try:
        os.remove(path)
        results[name] = "removed"
    except OSError as error:
        results[name] = error.strerror
print(json.dumps(results))
"""


@module_loop
@pytest.mark.parametrize("task_id", [FS_TASK, PG_TASK])
async def test_a_verifier_writes_nothing_outside_its_box(
    providers: ProviderSet, tmp_path: Path, task_id: str
) -> None:
    marker = secrets.token_hex(6)
    results_folder = tmp_path / "results"
    results_folder.mkdir()
    (results_folder / "verdicts.jsonl").write_text("{}\n")
    home = Path.home()
    host_tmp = Path("/tmp") / f"aj-planted-{marker}"
    tasks = tmp_path / "tasks"
    targets = {
        "host home": str(home / f"aj-planted-{marker}"),
        "host tmp": str(host_tmp),
        "beside the task": str(tasks / task_id / "planted.py"),
        "the verifier itself": str(tasks / task_id / "verify.py"),
        "results": str(results_folder / "planted.jsonl"),
        "the scratch space": str(current_run().directory() / f"aj-planted-{marker}"),
    }
    removals = {"remove results": str(results_folder / "verdicts.jsonl")}
    task, task_dir = hostile_task(
        tasks, task_id, WRITER.format(targets=repr(targets), removals=repr(removals))
    )
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    kind, sandbox = await sandbox_for(providers, task, task_dir)
    async with sandbox:
        tree_before = await tree_listing(kind, sandbox) if task_id == FS_TASK else ""
        run = await run_verifier(kind, task, task_dir, sandbox)
        results = last_json(run)
        assert run.passed, run.output
        assert set(results) >= set(targets) | set(removals)
        for name, outcome in results.items():
            refused = outcome in ("Read-only file system", "Permission denied", NO_SUCH_FILE)
            # The box's own /tmp takes the write; the host's never sees it (checked below).
            assert refused or (name == "host tmp" and outcome == "written"), (name, outcome)
        if task_id == FS_TASK:
            assert results["tree"] == "Read-only file system"
            assert await tree_listing(kind, sandbox) == tree_before
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    assert (results_folder / "verdicts.jsonl").read_text() == "{}\n"
    assert not host_tmp.exists()
    assert not (home / f"aj-planted-{marker}").exists()
    assert not (current_run().directory() / f"aj-planted-{marker}").exists()


SNOOP = """\
import json, os
found = {"environment": dict(os.environ)}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            found[pid] = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
        except OSError as error:
            found[pid] = error.strerror
for path in ("/proc/self/environ", "/etc/environment"):
    try:
        found[path] = open(path, "rb").read().decode(errors="replace")
    except OSError as error:
        found[path] = error.strerror
print(json.dumps(found))
"""


@pytest.fixture
def secrets_set(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The model keys set in the runtime's environment, with fresh values."""
    values = [f"sk-test-{secrets.token_hex(12)}" for _ in SECRET_NAMES]
    for name, value in zip(SECRET_NAMES, values, strict=True):
        monkeypatch.setenv(name, value)
    return values


@module_loop
@pytest.mark.parametrize("task_id", [FS_TASK, PG_TASK])
async def test_a_verifier_sees_no_secret_of_the_runtime(
    providers: ProviderSet, tmp_path: Path, task_id: str, secrets_set: list[str]
) -> None:
    task, task_dir = hostile_task(tmp_path / "tasks", task_id, SNOOP)
    run, sandbox = await verify(providers, task, task_dir)
    async with sandbox:
        assert run.passed, run.output
        assert '"environment"' in run.output  # it did print what it found
        for leaked in (*SECRET_NAMES, *secrets_set):
            assert leaked not in run.output
        if isinstance(sandbox, PostgresSandbox):
            # The sandbox's own role, not the cluster administrator's, nor its password.
            seen = json.loads(json.dumps(last_json(run)["environment"]))
            assert seen["POSTGRES_USERNAME"] == (await sandbox.owner_connection()).user
            assert seen["POSTGRES_USERNAME"] != sandbox.connection.user
            assert f"//{sandbox.connection.user}:" not in seen["DATABASE_URL"]
            if sandbox.connection.password:
                assert sandbox.connection.password not in run.output


async def test_fidelity_records_hold_no_secret(tmp_path: Path, secrets_set: list[str]) -> None:
    recorded = [
        Trajectory.model_validate_json(
            (MINI / "trajectories" / f"{task_id}--sonnet-pass.json").read_text()
        )
        for task_id in (FS_TASK, PG_TASK)
    ]
    dataset = build_dataset(tmp_path / "ds", recorded, (FS_TASK, PG_TASK))
    for task_id in (FS_TASK, PG_TASK):
        (dataset / "tasks" / task_id / "verify.py").write_text(SNOOP)
    await replay_dataset(dataset, tmp_path / "out", jobs=2)
    records = (tmp_path / "out" / REPORT_FILE).read_text()
    assert len(records.splitlines()) == 2
    assert '\\"environment\\"' in records  # the verifiers' output is there
    for leaked in (*SECRET_NAMES, *secrets_set):
        assert leaked not in records


ORPHAN = """\
import subprocess, sys, time
subprocess.Popen(
    [sys.executable, "-c", "import os, time; os.setsid(); time.sleep(600)", "{marker}"],
    start_new_session=True,
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
print("planted", flush=True)
time.sleep({sleep})
"""


@module_loop
@pytest.mark.parametrize("task_id", [FS_TASK, PG_TASK])
async def test_a_verifier_leaves_no_process_behind(
    providers: ProviderSet, tmp_path: Path, task_id: str
) -> None:
    marker = f"aj-orphan-{secrets.token_hex(6)}"
    task, task_dir = hostile_task(
        tmp_path / "tasks", task_id, ORPHAN.format(marker=marker, sleep=1)
    )
    run, sandbox = await verify(providers, task, task_dir)
    async with sandbox:
        assert run.passed, run.output
        assert "planted" in run.output
        assert processes_with(marker) == []


@module_loop
async def test_a_verifier_past_its_timeout_is_killed_with_all_it_started(
    providers: ProviderSet, tmp_path: Path
) -> None:
    marker = f"aj-orphan-{secrets.token_hex(6)}"
    task, task_dir = hostile_task(
        tmp_path / "tasks", FS_TASK, ORPHAN.format(marker=marker, sleep=600), timeout=1.5
    )
    run, sandbox = await verify(providers, task, task_dir)
    async with sandbox:
        assert run.timed_out
        assert not run.passed
        assert run.exit_code is None
        assert run.seconds < 15
        assert run.output.startswith("planted")
        assert run.output.endswith("[killed after 1.5 s]")
        assert processes_with(marker) == []


NETWORK = """\
import json, socket
results = {{}}
for host in ("127.0.0.1", {address!r}):
    try:
        socket.create_connection((host, {port}), timeout=5).close()
        results[host] = "connected"
    except OSError as error:
        results[host] = error.strerror
print(json.dumps(results))
"""


def host_address() -> str:
    """This machine's address on its default route (what a verifier would aim at instead of
    loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        return str(probe.getsockname()[0])


@module_loop
async def test_a_verifier_cannot_reach_the_network(providers: ProviderSet, tmp_path: Path) -> None:
    accepted: list[object] = []

    async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer.get_extra_info("peername"))
        writer.close()

    server = await asyncio.start_server(note, "0.0.0.0", 0)
    port = server.sockets[0].getsockname()[1]
    address = host_address()
    async with server:
        task, task_dir = hostile_task(
            tmp_path / "tasks", FS_TASK, NETWORK.format(address=address, port=port)
        )
        run, sandbox = await verify(providers, task, task_dir)
        await sandbox.destroy()
        # The listener is reachable from here: the box is what stops the verifier.
        with socket.create_connection((address, port), timeout=5):
            pass
        for _ in range(100):
            if accepted:
                break
            await asyncio.sleep(0.01)
    assert last_json(run) == {
        "127.0.0.1": "Connection refused",  # the box's own loopback, where nothing listens
        address: "Network is unreachable",
    }
    assert len(accepted) == 1  # only the test's own connection


PRIVILEGES = """\
import asyncio, json, os, sys
import asyncpg

async def attempt(connection, sql):
    try:
        return str(await connection.fetchval(sql))
    except asyncpg.PostgresError as error:
        return "refused: " + str(error)

async def main():
    found = {{}}
    connection = await asyncpg.connect(os.environ["DATABASE_URL"])
    found["database"] = await connection.fetchval("SELECT current_database()")
    found["argument"] = sys.argv[1]
    found["superuser"] = await attempt(
        connection, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    found["read file"] = await attempt(connection, "SELECT pg_read_file('/etc/hostname')")
    found["program"] = await attempt(connection, "COPY (SELECT 1) TO PROGRAM 'true'")
    found["settings"] = await attempt(connection, "ALTER SYSTEM SET work_mem = '1GB'")
    await connection.close()
    for user, database in (({admin!r}, os.environ["POSTGRES_DATABASE"]),
                           (os.environ["POSTGRES_USERNAME"], "postgres")):
        try:
            other = await asyncpg.connect(
                host=os.environ["POSTGRES_HOST"], port=int(os.environ["POSTGRES_PORT"]),
                user=user, password=os.environ["POSTGRES_PASSWORD"], database=database)
            found[f"as {{user}} to {{database}}"] = "connected"
            await other.close()
        except (OSError, asyncpg.PostgresError) as error:
            found[f"as {{user}} to {{database}}"] = "refused: " + str(error)
    try:
        server = await asyncpg.connect(host={host!r}, port={port}, user={admin!r},
                                       database="postgres", timeout=5)
        found["the real server"] = "connected"
        await server.close()
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as error:
        found["the real server"] = "refused: " + (str(error) or type(error).__name__)
    print(json.dumps(found))

asyncio.run(main())
"""


@module_loop
async def test_a_postgres_verifier_is_not_the_superuser(
    providers: ProviderSet, tmp_path: Path
) -> None:
    provider = await providers.get("postgres")
    assert isinstance(provider, ClusterPostgresProvider)
    cluster_admin = provider.cluster.admin
    script = PRIVILEGES.format(
        admin=cluster_admin.user, host=cluster_admin.host, port=cluster_admin.port
    )
    task, task_dir = hostile_task(tmp_path / "tasks", PG_TASK, script)
    run, sandbox = await verify(providers, task, task_dir)
    async with sandbox:
        assert run.passed, run.output
        found = last_json(run)
        assert found["database"] == found["argument"] == sandbox.name
        assert found["superuser"] == "False"
        for name in ("read file", "program", "settings"):
            assert re.match(r"refused: (permission denied|must be superuser)", found[name]), (
                name,
                found[name],
            )
        relay_refusals = [value for key, value in found.items() if key.startswith("as ")]
        assert len(relay_refusals) == 2
        for refusal in relay_refusals:
            assert refusal.startswith("refused: this relay admits role"), refusal
        assert found["the real server"].startswith("refused: "), found["the real server"]
        if cluster_admin.password:
            assert cluster_admin.password not in run.output


async def test_a_verifier_printing_100_mb_stays_small(tmp_path: Path) -> None:
    """Memory stays flat and the output is capped, in the report and in the log on disk."""
    task, task_dir = hostile_task(
        tmp_path / "tasks",
        FS_TASK,
        """\
        import sys
        line = b"x" * 1023 + b"\\n"
        chunk = line * 1024
        for _ in range(100):
            sys.stdout.buffer.write(chunk)
        print("the end")
        """,
    )
    log_sizes: list[int] = []
    done = asyncio.Event()
    me = psutil.Process()
    peak = 0

    def logs_now() -> None:
        for log in current_run().directory().glob("*_box_*/output.log"):
            with contextlib.suppress(FileNotFoundError):  # removed once the run ends
                log_sizes.append(log.stat().st_size)

    async def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, me.memory_info().rss)
            logs_now()
            await asyncio.sleep(0.005)

    async with ProviderSet(BackendChoice()) as providers:
        kind, sandbox = await sandbox_for(providers, task, task_dir)
        async with sandbox:
            start = peak = me.memory_info().rss
            sampler = asyncio.create_task(sample())
            run = await run_verifier(kind, task, task_dir, sandbox)
            done.set()
            await sampler
    assert run.passed, run.output[-500:]
    assert peak - start < 50 * 2**20, f"{(peak - start) / 2**20:.0f} MB more at the peak"
    assert len(run.output) <= OUTPUT_LIMIT + 100
    assert run.output.endswith("the end\n")
    assert "bytes cut ...]" in run.output
    assert log_sizes, "the log file was never seen"
    assert max(log_sizes) <= LOG_HEAD_BYTES + TAIL_BYTES + 100


async def test_without_bubblewrap_a_replay_stops_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = Trajectory.model_validate_json(
        (MINI / "trajectories" / f"{FS_TASK}--sonnet-pass.json").read_text()
    )
    dataset = build_dataset(tmp_path / "ds", [recorded], (FS_TASK,))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ConfinementError, match=r"install it with `apt-get install bubblewrap`"):
        await replay_dataset(dataset, tmp_path / "out", jobs=1)
    assert (
        not (tmp_path / "out" / REPORT_FILE).exists()
        or not (tmp_path / "out" / REPORT_FILE).read_text()
    )

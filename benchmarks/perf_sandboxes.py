"""``make perf-sandboxes``: sandbox and replay latencies, printed as figures (nothing asserted).

Measures, on this machine:
- filesystem sandbox create+destroy, and per-judge clone (hard-link farm; full copy for scale),
  for a 1,000-file / 50 MB tree (each create starts after ``os.sync()``: on this VM's disk the
  writeback of the previous 50 MB copy otherwise lands on the next one and triples it);
- Postgres per-judge clone of a ~25 MB database vs restoring it from its SQL seed (same run);
- grid preparation for one trajectory (6 turn budgets x 2 modes x 3 runs = 36 judge runs) relative
  to a single replay: one replay + freeze, then an environment for each of the 18 agent-mode
  judges (LLM-mode judges need none): the shared read-only view, or 18 private writable clones
  (their teardown, after the judges, is printed separately);
- replay throughput (trajectories/s, verifiers included) at ``--jobs 1`` and ``--jobs 4`` on 24
  copies of the bundled example's filesystem and Postgres trajectories;
- Docker backends (with ``--docker``): local and Docker side by side against the Docker targets
  (reference filesystem tool call, create from the 1,000-file tree, writable clone from a warm
  pool, and the wall time of ``agentjudge replay datasets/ds`` on each backend), container start
  with an empty pool, and Postgres container-ready latency;
- peak resident memory of this process and its children.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from dataset.models import DirectoryTreeState, EmptyState, SqlSeedState, Task
from dataset.store import Manifest, write_manifest, write_task, write_trajectory
from environments.backends import BackendChoice, ProviderSet
from environments.filesystem import as_filesystem_sandbox
from environments.postgres import as_postgres_sandbox
from judge_agent.modes import judge_mode
from replay.engine import replay_trajectory
from replay.frozen import FrozenReplays
from replay.runner import replay_dataset
from sandboxes.base import Sandbox, SandboxProvider
from sandboxes.runs import WORKDIR_ENV, workdir

TURN_BUDGETS = (1, 2, 4, 8, 16, 32)
MODES = ("agent", "llm")
RUNS = 3


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def figure(name: str, seconds: list[float]) -> None:
    milliseconds = [value * 1000 for value in seconds]
    print(
        f"{name:<58} median {statistics.median(milliseconds):8.1f} ms"
        f"   p95 {percentile(milliseconds, 0.95):8.1f} ms   (n={len(milliseconds)})"
    )


async def timed(action: Awaitable[object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = await action
    return time.perf_counter() - started, result


def build_tree(root: Path, files: int = 1000, total_bytes: int = 50 * 1024 * 1024) -> None:
    generator = random.Random(7)
    size = total_bytes // files
    for index in range(files):
        folder = root / f"dir{index % 20:02d}" / f"sub{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index:04d}.bin").write_bytes(generator.randbytes(size))


def tree_task() -> Task:
    return Task(
        id="perf-tree",
        domain="ds",
        subdomain="filesystem",
        instruction="Benchmark tree.",
        initial_state=DirectoryTreeState(),
    )


def write_seed(path: Path, rows: int = 180_000) -> None:
    generator = random.Random(11)
    with path.open("w") as handle:
        handle.write(
            "CREATE TABLE events (id integer PRIMARY KEY, account text NOT NULL,"
            " kind text NOT NULL, amount numeric(12,2) NOT NULL, note text);\n"
        )
        for start in range(0, rows, 1000):
            values = ",".join(
                f"({i},'acct-{generator.randrange(5000):05d}',"
                f"'{generator.choice(['buy', 'sell'])}',"
                f"{generator.randrange(1, 10**6) / 100},'{'n' * generator.randrange(40, 120)}')"
                for i in range(start, min(rows, start + 1000))
            )
            handle.write(f"INSERT INTO events VALUES {values};\n")
        handle.write("CREATE INDEX events_account ON events (account);\n")


async def filesystem_figures(provider: SandboxProvider, task_dir: Path, label: str) -> None:
    task = tree_task()
    create: list[float] = []
    destroy: list[float] = []
    for _ in range(5):
        os.sync()  # the previous iteration's 50 MB of writeback must not land on this one
        seconds, sandbox = await timed(provider.create(task, task_dir))
        create.append(seconds)
        assert isinstance(sandbox, Sandbox)
        seconds, _ = await timed(sandbox.destroy())
        destroy.append(seconds)
    figure(f"fs[{label}] create from the 1,000-file/50 MB tree", create)
    figure(f"fs[{label}] destroy", destroy)
    snapshot = await (await provider.create(task, task_dir)).freeze()
    handles: list[float] = []
    clones: list[float] = []
    made: list[Sandbox] = []
    for _ in range(20):
        started = time.perf_counter()
        clone = as_filesystem_sandbox(await snapshot.clone(writable=True))
        handles.append(time.perf_counter() - started)
        await clone.tree.write_bytes("judge-note.txt", b"a judge wrote this")
        clones.append(time.perf_counter() - started)
        made.append(clone)
    figure(f"fs[{label}] per-judge writable clone, until its first write", handles)
    figure(f"fs[{label}] per-judge writable clone + first write", clones)
    for made_clone in made:
        await made_clone.destroy()
    views = [(await timed(snapshot.clone(writable=False)))[0] for _ in range(20)]
    figure(f"fs[{label}] per-judge read-only view (shared)", views)
    await snapshot.destroy()


async def postgres_figures(providers: ProviderSet, seed_dir: Path) -> None:
    provider = await providers.get("postgres")
    task = Task(
        id="perf-db",
        domain="ds",
        subdomain="postgres",
        instruction="Benchmark database.",
        initial_state=SqlSeedState(),
    )
    seconds, sandbox = await timed(provider.create(task, seed_dir))
    print(f"{'pg first create (builds the template from the seed)':<58} {seconds * 1000:8.1f} ms")
    assert isinstance(sandbox, Sandbox)
    size = await database_size(sandbox)
    snapshot = await sandbox.freeze()
    clones: list[float] = []
    for _ in range(12):
        seconds, clone = await timed(snapshot.clone(writable=True))
        clones.append(seconds)
        assert isinstance(clone, Sandbox)
        await clone.destroy()
    figure(f"pg per-judge writable clone ({size / 2**20:.1f} MB database)", clones)
    restores: list[float] = []
    for index in range(3):
        fresh_task = task.model_copy(update={"id": f"perf-db-restore-{index}"})
        seconds, restored = await timed(provider.create(fresh_task, seed_dir))
        restores.append(seconds)
        assert isinstance(restored, Sandbox)
        await restored.destroy()
    figure("pg restore from the SQL seed (new template + clone)", restores)
    print(
        f"{'pg clone / restore ratio (median)':<58} "
        f"{statistics.median(clones) / statistics.median(restores):8.3f}"
    )
    await snapshot.destroy()


async def database_size(sandbox: Sandbox) -> int:
    async with as_postgres_sandbox(sandbox).connect() as connection:
        return int(await connection.fetchval("SELECT pg_database_size(current_database())"))


def grid_dataset(root: Path, tree: Path, writes: int = 20) -> None:
    from dataset.actions import ToolCallAction
    from dataset.models import Observation, Step, Trajectory

    write_manifest(root, Manifest(name="perf-grid"))
    task = tree_task()
    write_task(root, task)
    shutil.copytree(tree, root / "tasks" / task.id / "initial")
    steps: list[Step] = []
    for index in range(writes):
        path = f"${{SANDBOX_ROOT}}/dir{index % 20:02d}/report{index}.txt"
        steps.append(
            Step(
                index=len(steps) + 1,
                action=ToolCallAction(
                    name="write_file", arguments={"path": path, "content": f"line {index}\n"}
                ),
                observation=Observation(text=f"Successfully wrote to {path}"),
            )
        )
        steps.append(
            Step(
                index=len(steps) + 1,
                action=ToolCallAction(name="read_text_file", arguments={"path": path}),
                observation=Observation(text=f"line {index}\n"),
            )
        )
    for copy in range(8):
        write_trajectory(
            root,
            Trajectory(id=f"perf-tree--run{copy}", task_id=task.id, agent="bench", steps=steps),
        )


async def grid_figures(dataset_root: Path) -> None:
    from dataset.store import load_dataset

    dataset = load_dataset(dataset_root)
    trajectory = dataset.trajectories["perf-tree--run0"]
    task = dataset.tasks[trajectory.task_id]
    async with ProviderSet() as providers:
        await providers.get("filesystem")
        singles = []
        for _ in range(3):
            seconds, _ = await timed(
                replay_trajectory(
                    trajectory, task, dataset.task_dir(task.id), providers, verify=False
                )
            )
            singles.append(seconds)
        single = statistics.median(singles)
        scenarios = [
            ("shared read-only view", False, False),
            ("18 writable clones, never written", True, False),
            ("18 writable clones, each written once", True, True),
        ]
        for name, writable, writes in scenarios:
            async with FrozenReplays(dataset, providers, verify=False) as frozen:
                environments = []
                started = time.perf_counter()
                for _budget in TURN_BUDGETS:
                    for mode in MODES:
                        for _run in range(RUNS):
                            if not judge_mode(mode).uses_tools:
                                continue  # LLM-as-judge reads the trajectory only
                            found = await frozen.environment(trajectory.id, writable=writable)
                            assert found is not None
                            environment = as_filesystem_sandbox(found)
                            if writes:
                                await environment.tree.write_bytes("judge.txt", b"note")
                            environments.append(environment)
                grid = time.perf_counter() - started
                started = time.perf_counter()
                for environment in environments if writable else []:
                    await frozen.release_clone(trajectory.id, environment)
                teardown = time.perf_counter() - started
            print(
                f"{'grid prep, 36 runs, ' + name:<58} {grid * 1000:8.1f} ms"
                f"   = {grid / single:.2f} x single replay ({single * 1000:.1f} ms)"
                + (f"; teardown after the judges {teardown * 1000:.0f} ms" if writable else "")
            )


MINI = Path(__file__).resolve().parents[1] / "datasets" / "examples" / "mini"


def throughput_dataset(root: Path, copies: int = 6) -> None:
    """The bundled example's DS tasks (a small tree, a small database, both with verifiers) and
    ``copies`` renamed copies of each of their four recorded trajectories."""
    from dataset.store import load_dataset

    mini = load_dataset(MINI)
    write_manifest(root, Manifest(name="perf-throughput"))
    for task in mini.tasks.values():
        if task.domain == "ds":
            shutil.copytree(mini.task_dir(task.id), root / "tasks" / task.id)
    for trajectory in mini.trajectories.values():
        if mini.tasks[trajectory.task_id].domain == "ds":
            for copy in range(copies):
                renamed = trajectory.model_copy(update={"id": f"{trajectory.id}--copy{copy}"})
                write_trajectory(root, renamed)


async def throughput_figures(dataset_root: Path, output: Path) -> None:
    for jobs in (1, 4):
        started = time.perf_counter()
        summary = await replay_dataset(dataset_root, output / f"jobs{jobs}", jobs=jobs, fresh=True)
        seconds = time.perf_counter() - started
        count = summary.total.trajectories
        print(
            f"{f'replay throughput --jobs {jobs}':<58} {count / seconds:8.2f} trajectories/s"
            f"   ({count} in {seconds:.2f} s, faithful {summary.total.faithful})"
        )


TARGETS = {
    "tool call": "<= 5 ms",
    "writable clone": "<= 100 ms",
    "create": "<= 500 ms",
    "replay": "<= 2 x local",
}
"""The Docker backend's targets (issue 22), printed beside its figures."""


async def tool_calls(provider: SandboxProvider, task_dir: Path, rounds: int = 50) -> list[float]:
    """Seconds per reference filesystem tool call (a mix of reads and writes) on a sandbox of
    the 1,000-file tree."""
    from mcp_servers.filesystem.operations import call_filesystem_tool

    sandbox = as_filesystem_sandbox(await provider.create(tree_task(), task_dir))
    root = sandbox.root
    await sandbox.tree.write_bytes("notes.txt", b"one\ntwo\nthree\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_text_file", {"path": f"{root}/notes.txt"}),
        ("read_text_file", {"path": f"{root}/notes.txt", "head": 2}),
        ("get_file_info", {"path": f"{root}/dir00/sub0/file0000.bin"}),
        ("list_directory", {"path": f"{root}/dir00/sub0"}),
        ("write_file", {"path": f"{root}/dir01/out.txt", "content": "written\n"}),
        ("create_directory", {"path": f"{root}/made/deeper"}),
    ]
    seconds: list[float] = []
    for _ in range(rounds):
        for name, arguments in calls:
            started = time.perf_counter()
            result = await call_filesystem_tool(sandbox.tree, name, arguments)
            seconds.append(time.perf_counter() - started)
            assert not result.is_error, (name, result)
    await sandbox.destroy()
    return seconds


async def warm(provider: SandboxProvider) -> None:
    """Wait until a Docker provider's pool is full again (a no-op for other providers)."""
    pool = getattr(provider, "pool", None)
    if pool is None:
        return
    pool.prefill()
    deadline = time.monotonic() + 120
    while len(pool.waiting()) < pool.size and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


async def side_by_side(provider: SandboxProvider, task_dir: Path) -> dict[str, list[float]]:
    """The figures the Docker targets are about, for one provider."""
    task = tree_task()
    found: dict[str, list[float]] = {"tool call": await tool_calls(provider, task_dir)}
    creates: list[float] = []
    written: list[float] = []
    for _ in range(6):
        await warm(provider)
        os.sync()
        # A new copy of the tree each time: the Docker backend copies a task's tree once and
        # later sandboxes of the task attach that copy (figured separately below).
        os.utime(task_dir / "initial" / "dir00")
        started = time.perf_counter()
        sandbox = as_filesystem_sandbox(await provider.create(task, task_dir))
        creates.append(time.perf_counter() - started)
        await sandbox.tree.write_bytes("replayed.txt", b"the first replayed call")
        written.append(time.perf_counter() - started)
        await sandbox.destroy()
    found["create"] = creates
    found["create + first write"] = written
    again: list[float] = []
    for _ in range(5):
        await warm(provider)
        seconds, made = await timed(provider.create(task, task_dir))
        again.append(seconds)
        assert isinstance(made, Sandbox)
        await made.destroy()
    found["create, the task's tree already copied"] = again
    snapshot = await (await provider.create(task, task_dir)).freeze()
    clones: list[float] = []
    cloned_written: list[float] = []
    for _ in range(10):
        await warm(provider)
        started = time.perf_counter()
        clone = as_filesystem_sandbox(await snapshot.clone(writable=True))
        clones.append(time.perf_counter() - started)
        await clone.tree.write_bytes("judge-note.txt", b"a judge wrote this")
        cloned_written.append(time.perf_counter() - started)
        await clone.destroy()
    found["writable clone"] = clones
    found["writable clone + first write"] = cloned_written
    await snapshot.destroy()
    return found


def ds_replay_seconds(backend: str, output: Path) -> float:
    """Wall seconds of ``agentjudge replay datasets/ds --backend BACKEND`` (a fresh run, the
    command's own process, the same as ``make replay``)."""
    import subprocess
    import sys

    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable, "-m", "agentjudge", "replay", str(DS_SUITE),
            "--backend", backend, "--output", str(output), "--fresh",
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"replay --backend {backend} failed: {done.stderr[-2000:]}")
    return seconds


DS_SUITE = Path(__file__).resolve().parents[1] / "datasets" / "ds"


async def docker_figures(task_dir: Path, seed_dir: Path, scratch: Path) -> None:
    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.docker.pool import start_resident
    from sandboxes.filesystem.docker import DockerFilesystemProvider
    from sandboxes.filesystem.local import LocalFilesystemProvider
    from sandboxes.postgres.docker_cluster import DockerPostgresCluster

    ensure_sandbox_image()
    async with LocalFilesystemProvider() as local:
        local_figures = await side_by_side(local, task_dir)
    async with DockerFilesystemProvider(pool_size=4) as provider:
        docker_figures = await side_by_side(provider, task_dir)
        empty = tree_task().model_copy(update={"initial_state": EmptyState()})
        cold: list[float] = []
        for _ in range(3):  # what a take costs when the pool is empty: a container started
            started = time.perf_counter()
            resident = await asyncio.to_thread(start_resident, provider.client, provider.pool.spec)
            cold.append(time.perf_counter() - started)
            await asyncio.to_thread(resident.remove)
        await warm(provider)
        ready: list[float] = []
        for _ in range(3):
            await warm(provider)
            seconds, sandbox = await timed(provider.create(empty, task_dir))
            ready.append(seconds)
            assert isinstance(sandbox, Sandbox)
            await sandbox.destroy()
    print(f"{'fs, local vs docker (medians)':<44} {'local':>10} {'docker':>10}   target")
    for name, values in docker_figures.items():
        local_ms = statistics.median(local_figures[name]) * 1000
        docker_ms = statistics.median(values) * 1000
        target = TARGETS.get(name, "")
        print(f"{'  ' + name:<44} {local_ms:8.2f}ms {docker_ms:8.2f}ms   {target}")
    figure("fs[docker] container start with its helper (a take from an empty pool)", cold)
    figure("fs[docker] sandbox ready, empty tree, warm pool", ready)
    if DS_SUITE.is_dir():
        local_seconds = ds_replay_seconds("local", scratch / "ds-local")
        docker_seconds = ds_replay_seconds("docker", scratch / "ds-docker")
        print(
            f"{'  replay datasets/ds (--jobs 4, wall)':<44}"
            f" {local_seconds:9.1f}s {docker_seconds:9.1f}s"
            f"   {TARGETS['replay']} (x{docker_seconds / local_seconds:.2f})"
        )
    starts: list[float] = []
    for _ in range(3):
        cluster = DockerPostgresCluster()
        seconds, _ = await timed(cluster.start())
        starts.append(seconds)
        await cluster.stop()
    figure("pg[docker] container ready", starts)
    async with ProviderSet(BackendChoice.for_backend("docker")) as providers:
        await postgres_figures(providers, seed_dir)


async def main(use_docker: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="aj-perf-") as scratch:
        base = Path(scratch)
        task_dir = base / "tree-task"
        build_tree(task_dir / "initial")
        seed_dir = base / "db-task"
        seed_dir.mkdir()
        write_seed(seed_dir / "seed.sql")
        print(f"seed.sql: {(seed_dir / 'seed.sql').stat().st_size / 2**20:.1f} MB")

        from sandboxes.filesystem.local import LocalFilesystemProvider

        async with LocalFilesystemProvider() as provider:
            place = "RAM" if workdir().is_relative_to("/dev/shm") else "disk"
            await filesystem_figures(provider, task_dir, f"local, {place}")
        # The same on disk: where the scratch space goes when /dev/shm is small or absent.
        on_disk = Path(tempfile.mkdtemp(prefix="aj-perf-disk-"))
        os.environ[WORKDIR_ENV] = str(on_disk)
        try:
            async with LocalFilesystemProvider() as provider:
                await filesystem_figures(provider, task_dir, "local, disk")
        finally:
            del os.environ[WORKDIR_ENV]
            shutil.rmtree(on_disk, ignore_errors=True)
        for method in ("link", "copy"):  # the fallbacks where overlays cannot be mounted
            async with LocalFilesystemProvider(clone_method=method) as provider:
                snapshot = await (await provider.create(tree_task(), task_dir)).freeze()
                costs = []
                for _ in range(10):
                    started = time.perf_counter()
                    clone = as_filesystem_sandbox(await snapshot.clone(writable=True))
                    await clone.tree.write_bytes("judge-note.txt", b"a judge wrote this")
                    costs.append(time.perf_counter() - started)
                    await clone.destroy()
                figure(f"fs[local] clone + first write with clone_method={method}", costs)
                await snapshot.destroy()

        async with ProviderSet() as providers:
            await postgres_figures(providers, seed_dir)

        grid_root = base / "grid-dataset"
        grid_dataset(grid_root, task_dir / "initial")
        await grid_figures(grid_root)
        throughput_root = base / "throughput-dataset"
        throughput_dataset(throughput_root)
        await throughput_figures(throughput_root, base / "reports")

        if use_docker:
            await docker_figures(task_dir, seed_dir, base)

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{'peak RSS: this process / largest child':<58} {own:8.1f} MB / {children:.1f} MB")
    print(json.dumps({"docker": use_docker}))


async def docker_only() -> None:
    """Only the Docker figures (``--docker-only``): the trees they need, then the comparison."""
    with tempfile.TemporaryDirectory(prefix="aj-perf-") as scratch:
        base = Path(scratch)
        task_dir = base / "tree-task"
        build_tree(task_dir / "initial")
        seed_dir = base / "db-task"
        seed_dir.mkdir()
        write_seed(seed_dir / "seed.sql")
        await docker_figures(task_dir, seed_dir, base)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docker", action="store_true", help="also measure the Docker backends")
    parser.add_argument(
        "--docker-only", action="store_true", help="measure only the Docker side-by-side figures"
    )
    options = parser.parse_args()
    if options.docker_only:
        asyncio.run(docker_only())
    else:
        asyncio.run(main(options.docker))

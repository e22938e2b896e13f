"""Collecting what killed runs left in Docker, and never what live runs or the base image use."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from dataset.models import EmptyState, Task
from sandboxes.docker.leftovers import PID_LABEL, collect_docker_leftovers, run_labels
from sandboxes.docker.rootfs import IMAGE_LABEL
from sandboxes.filesystem.docker import DockerFilesystemProvider, DockerFilesystemSnapshot
from sandboxes.filesystem.local import collect_local_leftovers
from sandboxes.runs import RUN_LABEL, current_run, scratch_roots

pytestmark = pytest.mark.docker

CHILD = """
import asyncio, json, sys, tempfile
from pathlib import Path
from typing import Any
from dataset.models import EmptyState, Task
from sandboxes.filesystem.docker import DockerFilesystemProvider, DockerFilesystemSnapshot
from sandboxes.postgres.docker_cluster import DockerPostgresCluster
from sandboxes.runs import current_run

async def main() -> None:
    task = Task(id="t", domain="ds", subdomain="filesystem", instruction="i",
                initial_state=EmptyState())
    provider = DockerFilesystemProvider(sys.argv[1], pool_size=2)
    live = await provider.create(task, Path(tempfile.gettempdir()))
    snapshot = await (await provider.create(task, Path(tempfile.gettempdir()))).freeze()
    clone = await snapshot.clone()
    view = await snapshot.clone(writable=False)
    cluster = DockerPostgresCluster(sys.argv[1])
    await cluster.start()
    while not provider.pool.waiting():  # containers started ahead of need, never taken
        await asyncio.sleep(0.05)
    print(json.dumps({
        "run": current_run().run_id,
        "containers": [live.name, clone.name, view.name, cluster.name],
        "pool": provider.pool.waiting(),
        "folders": [str(snapshot.folder)],
    }), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


@pytest.fixture
def engine() -> Iterator[docker.DockerClient]:
    client = docker.from_env()
    yield client
    client.close()


def exists(engine: docker.DockerClient, kind: str, name: str | None) -> bool:
    assert name is not None
    getters: dict[str, Callable[[str], object]] = {
        "container": engine.containers.get,
        "image": engine.images.get,
    }
    try:
        getters[kind](name)
    except docker.errors.NotFound:
        return False
    return True


async def test_a_killed_runs_containers_pool_and_snapshots_are_collected(
    sandbox_image: str, engine: docker.DockerClient
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, sandbox_image],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line, child.stderr.read() if child.stderr else "child printed nothing"
        made = json.loads(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    run_id = made["run"]
    assert run_id != current_run().run_id
    containers = [*made["containers"], *made["pool"]]
    assert made["pool"]
    assert all(exists(engine, "container", name) for name in containers)
    assert all(Path(folder).is_dir() for folder in made["folders"])

    removed = await collect_docker_leftovers(only_runs={run_id})

    for name in containers:
        assert not exists(engine, "container", name), name
        assert any(name in line for line in removed), name
    await collect_local_leftovers()  # the run's scratch folder: snapshots and socket folders
    assert not any(Path(folder).exists() for folder in made["folders"])
    assert exists(engine, "image", sandbox_image)  # the base image is never collected
    assert await collect_docker_leftovers(only_runs={run_id}) == []


async def test_a_live_runs_resources_are_kept(
    sandbox_image: str, engine: docker.DockerClient
) -> None:
    task = Task(
        id="t", domain="ds", subdomain="filesystem", instruction="i", initial_state=EmptyState()
    )
    async with DockerFilesystemProvider(sandbox_image) as provider:
        sandbox = await provider.create(task, Path(__file__).parent)
        snapshot = await (await provider.create(task, Path(__file__).parent)).freeze()
        removed = await collect_docker_leftovers(only_runs={current_run().run_id})
        assert removed == []
        assert exists(engine, "container", sandbox.name)
        assert isinstance(snapshot, DockerFilesystemSnapshot)
        assert snapshot.folder.is_dir()
        assert all(exists(engine, "container", name) for name in provider.pool.waiting())


async def test_volumes_and_stray_containers_of_dead_runs_are_collected(
    sandbox_image: str, engine: docker.DockerClient
) -> None:
    dead = "zzzzzzzzz0"  # no record: a dead run
    labels = {RUN_LABEL: dead}
    volume = engine.volumes.create(name=f"aj_{dead}_vol_1", labels=labels)
    container = engine.containers.create(
        sandbox_image, name=f"aj_{dead}_fs_1", labels=labels, network_mode="none"
    )
    # An image labelled like the base image but with a dead run label is still the run's.
    image = container.commit(
        repository=f"aj_{dead}_fsnap_1",
        changes=[f"LABEL {IMAGE_LABEL}=fsnap", f"LABEL {RUN_LABEL}={dead}"],
    )
    removed = await collect_docker_leftovers(only_runs={dead})
    assert sorted(line.split(" (")[0] for line in removed) == sorted(
        [
            f"docker container aj_{dead}_fs_1",
            f"docker image aj_{dead}_fsnap_1:latest",
            f"docker volume aj_{dead}_vol_1",
        ]
    )
    assert not exists(engine, "container", container.name)
    assert not exists(engine, "image", image.id)
    with pytest.raises(docker.errors.NotFound):
        engine.volumes.get(volume.name)


async def test_a_live_process_keeps_its_resources_even_without_a_run_record_here(
    sandbox_image: str, engine: docker.DockerClient
) -> None:
    # Another test session's run: its record lives in that session's work directory, not ours.
    elsewhere = "zzzzzzzzz1"
    labels = {**run_labels("filesystem"), RUN_LABEL: elsewhere}
    container = engine.containers.create(
        sandbox_image, name=f"aj_{elsewhere}_fs_1", labels=labels, network_mode="none"
    )
    try:
        assert await collect_docker_leftovers(only_runs={elsewhere}) == []
        assert exists(engine, "container", container.name)
        # The same labels naming a process that is gone (or younger than recorded) are dead.
        container.remove(force=True)
        stale = {**labels, "agentjudge.process-started": "1.0"}
        container = engine.containers.create(
            sandbox_image, name=f"aj_{elsewhere}_fs_2", labels=stale, network_mode="none"
        )
        removed = await collect_docker_leftovers(only_runs={elsewhere})
        assert [line.split(" (")[0] for line in removed] == [
            f"docker container aj_{elsewhere}_fs_2"
        ]
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


MINI = Path(__file__).resolve().parents[3] / "datasets" / "examples" / "mini"


async def test_kill_9_during_a_docker_replay_leaves_nothing_after_gc(
    sandbox_image: str, engine: docker.DockerClient, tmp_path: Path
) -> None:
    child = subprocess.Popen(
        [
            sys.executable, "-m", "agentjudge", "replay", str(MINI), "--backend", "docker",
            "--jobs", "1", "--output", str(tmp_path / "reports"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )  # fmt: skip
    mine: dict[str, Any] = {"label": f"{PID_LABEL}={child.pid}"}
    try:
        # Kill it once a sandbox is in use and the pool holds containers started ahead of need.
        for _ in range(2400):
            # The low-level listing: the high-level one inspects each container, and one the
            # replay removes meanwhile would fail it.
            sandboxes = [
                item
                for item in engine.api.containers(all=True, filters=mine)
                if item["Labels"].get("agentjudge.kind") == "filesystem"
            ]
            if len(sandboxes) >= 2 or child.poll() is not None:
                break
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read() if child.stderr else "replay ended"
        assert len(sandboxes) >= 2
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    run_id = sandboxes[0]["Labels"][RUN_LABEL]
    assert run_id != current_run().run_id
    # Low-level listings again: a container of the killed run may vanish while it is listed.
    run_filter = {"label": f"{RUN_LABEL}={run_id}"}
    assert engine.api.containers(all=True, filters=run_filter)

    removed = await collect_docker_leftovers(only_runs={run_id})
    removed += await collect_local_leftovers()

    assert engine.api.containers(all=True, filters=run_filter) == []
    assert engine.images.list(all=True, filters={"label": f"{RUN_LABEL}={run_id}"}) == []
    assert [line for line in removed if "docker container" in line]
    assert not [path for root in scratch_roots() for path in root.glob(f"aj_{run_id}*")]

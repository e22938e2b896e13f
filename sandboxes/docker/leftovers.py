"""Garbage collection of the Docker resources (containers, images, volumes) of dead runs.

Everything the Docker backends create carries ``run_labels()``: the ``agentjudge.run`` label and
the creating process (host, pid, start time). A resource is removed when its run is dead: no live
run record (``sandboxes.runs.run_is_alive``) and, when the labels name the process, that process
is gone. The process check matters because the Engine is shared by every run on the machine while
run records live in each run's own work directory (test sessions use private ones): a record
missing here does not mean the run is dead. The sandbox base image has no run label and is never
touched.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Collection

import docker
import docker.errors

from sandboxes.docker.images import REPOSITORY
from sandboxes.runs import (
    RUN_LABEL,
    current_run,
    may_be_same_process,
    process_start_time,
    run_is_alive,
)

HOST_LABEL = "agentjudge.host"
PID_LABEL = "agentjudge.pid"
STARTED_LABEL = "agentjudge.process-started"


def run_labels(kind: str) -> dict[str, str]:
    """The labels every container and image of this run carries (``kind``: what it is)."""
    pid = os.getpid()
    started = process_start_time(pid) or 0.0
    return {
        RUN_LABEL: current_run().run_id,
        HOST_LABEL: socket.gethostname(),
        PID_LABEL: str(pid),
        STARTED_LABEL: repr(started),
        "agentjudge.kind": kind,
    }


def _process_alive(labels: dict[str, str]) -> bool:
    """Whether the labels name a process that still runs (None of ours to judge: True)."""
    host = labels.get(HOST_LABEL)
    if host is None:
        return False  # made before processes were labelled: the run record decides
    if host != socket.gethostname():
        return True  # another machine's run
    try:
        pid, started = int(labels[PID_LABEL]), float(labels[STARTED_LABEL])
    except (KeyError, ValueError):
        return False
    return may_be_same_process(pid, started)


def _dead(labels: dict[str, str] | None, only: Collection[str] | None) -> str | None:
    found = labels or {}
    run_id = found.get(RUN_LABEL)
    if not run_id or (only is not None and run_id not in only):
        return None
    if run_is_alive(run_id) or _process_alive(found):
        return None
    return run_id


def _collect(only: Collection[str] | None) -> list[str]:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException:
        return []  # no engine, nothing of ours can be running in it
    removed: list[str] = []
    label_filter: dict[str, str | list[str] | bool] = {"label": RUN_LABEL}
    try:
        # Containers first: they pin the images and volumes below.
        for container in client.containers.list(all=True, filters=label_filter):
            run_id = _dead(container.labels, only)
            if run_id is None:
                continue
            try:
                container.remove(force=True, v=True)
            except docker.errors.NotFound:
                continue
            removed.append(f"docker container {container.name} (run {run_id})")
        for image in client.images.list(all=True, filters=label_filter):
            run_id = _dead(image.labels, only)
            if run_id is None or any(tag.startswith(f"{REPOSITORY}:") for tag in image.tags):
                continue
            if image.id is None:
                continue
            try:
                client.images.remove(image.id, force=True)
            except docker.errors.NotFound:
                continue
            shown = ", ".join(image.tags) or image.short_id
            removed.append(f"docker image {shown} (run {run_id})")
        for volume in client.volumes.list(filters=label_filter):
            run_id = _dead(volume.attrs.get("Labels"), only)
            if run_id is None:
                continue
            try:
                volume.remove(force=True)
            except docker.errors.NotFound:
                continue
            removed.append(f"docker volume {volume.name} (run {run_id})")
    finally:
        client.close()
    return removed


async def collect_docker_leftovers(*, only_runs: Collection[str] | None = None) -> list[str]:
    """Remove the containers, images and volumes of dead runs; one line per removed thing.

    ``only_runs`` restricts collection to those run ids (tests use it so that they never collect
    what a concurrent test session, whose run records live elsewhere, still uses).
    """
    return await asyncio.to_thread(_collect, only_runs)

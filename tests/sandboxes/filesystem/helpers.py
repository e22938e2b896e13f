"""Filesystem providers of every backend, for the tests of sandboxes and of the tools over them."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from sandboxes.filesystem.sandbox import FilesystemProvider, FilesystemSandbox, FilesystemSnapshot

BACKENDS: list[Any] = ["local", pytest.param("docker", marks=pytest.mark.docker)]
"""Fixture parameters: every filesystem backend, Docker ones marked."""


@asynccontextmanager
async def filesystem_provider(backend: str, **options: Any) -> AsyncIterator[FilesystemProvider]:
    """A provider of ``backend`` (``local`` or ``docker``, building the image if needed);
    ``options`` go to its constructor (e.g. ``quota_bytes``)."""
    made: FilesystemProvider
    if backend == "docker":
        from sandboxes.docker.images import ensure_sandbox_image
        from sandboxes.filesystem.docker import DockerFilesystemProvider

        ensure_sandbox_image()
        made = DockerFilesystemProvider(**options)
    else:
        from sandboxes.filesystem.local import LocalFilesystemProvider

        made = LocalFilesystemProvider(**options)
    async with made:
        yield made


@asynccontextmanager
async def cloned(
    snapshot: FilesystemSnapshot, *, writable: bool = True
) -> AsyncIterator[FilesystemSandbox]:
    """A clone of ``snapshot`` (private and writable by default), destroyed afterwards."""
    clone = await snapshot.clone(writable=writable)
    async with clone:
        yield clone


def run_in_tree(sandbox: FilesystemSandbox, script: str) -> str:
    """Run a POSIX shell ``script`` in the sandbox's root (on the host, or in its container),
    as a dataset's own code could; returns its output and fails on a non-zero exit."""
    container = getattr(sandbox.tree, "container", None)
    if container is not None:
        result = container.exec_run(["sh", "-c", script], workdir=sandbox.root)
        assert result.exit_code == 0, result.output
        assert isinstance(result.output, bytes)
        return result.output.decode()
    finished = subprocess.run(
        ["sh", "-c", script], cwd=sandbox.root, capture_output=True, text=True, check=False
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout

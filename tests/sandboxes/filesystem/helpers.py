"""Filesystem providers of every backend, for the tests of sandboxes and of the tools over them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from sandboxes.filesystem.sandbox import FilesystemProvider

BACKENDS: list[Any] = ["local", pytest.param("docker", marks=pytest.mark.docker)]
"""Fixture parameters: every filesystem backend, Docker ones marked."""


@asynccontextmanager
async def filesystem_provider(backend: str) -> AsyncIterator[FilesystemProvider]:
    """A provider of ``backend`` (``local`` or ``docker``, building the image if needed)."""
    made: FilesystemProvider
    if backend == "docker":
        from sandboxes.docker.images import ensure_sandbox_image
        from sandboxes.filesystem.docker import DockerFilesystemProvider

        ensure_sandbox_image()
        made = DockerFilesystemProvider()
    else:
        from sandboxes.filesystem.local import LocalFilesystemProvider

        made = LocalFilesystemProvider()
    async with made:
        yield made

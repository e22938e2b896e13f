"""Container operations shared by the Docker backends."""

from __future__ import annotations

from typing import cast

import docker.errors
from docker.models.containers import Container, ExecResult

CONFLICT = 409
"""The engine's answer when a removal of the same container is already under way."""


def remove_container(container: Container) -> None:
    """Force-remove a container and its anonymous volumes; gone already is fine."""
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as error:
        if error.status_code != CONFLICT:
            raise


def demuxed_output(result: ExecResult) -> tuple[bytes, bytes]:
    """Standard output and error of ``exec_run(..., demux=True)``, empty when a stream wrote
    nothing. (With ``demux`` the engine's answer is a pair; the stubs type the plain one.)"""
    stdout, stderr = cast("tuple[bytes | None, bytes | None]", result.output)
    return stdout or b"", stderr or b""

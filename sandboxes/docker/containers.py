"""Container operations shared by the Docker backends."""

from __future__ import annotations

import docker.errors
from docker.models.containers import Container

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

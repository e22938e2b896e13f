"""The Docker images of the kinds' backends, as the kinds declare them (``EnvironmentKind.images``).

Owns ``SANDBOX_IMAGE`` (the image several kinds' ``docker`` backends share) and
``images_of_kinds``, which ``agentjudge sandboxes build-images`` and ``make images`` build from.
Nothing here knows which kind uses which image.
"""

from __future__ import annotations

from collections.abc import Iterable

from environments.kind import EnvironmentKind, ImageRecipe


def _build_sandbox_image(force: bool) -> str:
    from sandboxes.docker.images import build_sandbox_image

    return build_sandbox_image(force=force)


SANDBOX_IMAGE = ImageRecipe(
    name="sandbox",
    build=_build_sandbox_image,
)
"""Debian with Python and PostgreSQL (built by debootstrap), which the ``docker`` backends of the
filesystem and postgres kinds run."""


def images_of_kinds(
    kinds: Iterable[EnvironmentKind], *, every: bool = True
) -> list[tuple[ImageRecipe, list[str]]]:
    """The images of ``kinds``, once per name, each with the kinds that use it, in the kinds'
    order; with ``every`` False, only those built by default (``ImageRecipe.by_default``)."""
    found: dict[str, tuple[ImageRecipe, list[str]]] = {}
    for kind in kinds:
        for image in kind.images():
            if every or image.by_default:
                found.setdefault(image.name, (image, []))[1].append(kind.name)
    return list(found.values())

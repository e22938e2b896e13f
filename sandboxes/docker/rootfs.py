"""Docker images built from a Debian root filesystem, never pulled from a registry.

An image module describes its image as a ``RootfsRecipe`` (the Debian release, the packages
debootstrap installs, how the unpacked tree is configured, the ``docker import`` changes, and
the hash of all that, which is the image's tag); ``build_image`` does the rest, the same way for
every image: under a per-image lock, download the packages into a tarball (cached), unpack them
with debootstrap into a scratch root, configure it, pack it into a tarball (cached, so rebuilding
a removed image costs only the import), ``docker import`` it and remove the images of earlier
recipes that no container uses.

Building needs root (debootstrap, chroot) and the Docker engine; ``require_debootstrap`` checks
both first and installs debootstrap with apt when it can. Cached files live in
``~/.cache/agentjudge/`` (``$XDG_CACHE_HOME`` respected).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from sandboxes.base import SandboxError
from sandboxes.filesystem.overlay import mounts_below
from sandboxes.system_packages import can_install, install_with_apt
from settings import get_settings

logger = logging.getLogger(__name__)

IMAGE_LABEL = "agentjudge.image"
"""Label naming what an image is (its recipe's ``name``)."""

RECIPE_LABEL = "agentjudge.recipe"
"""Label holding the recipe hash an image was built from."""


def recipe_digest(*parts: object) -> str:
    """A short, stable hash of JSON-serialisable recipe parts (an image's tag)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def cache_directory() -> Path:
    """``~/.cache/agentjudge`` (under ``$XDG_CACHE_HOME`` when set), created on demand."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "agentjudge"
    path.mkdir(parents=True, exist_ok=True)
    return path


def docker_client(timeout: int = 120) -> docker.DockerClient:
    """A client for the local engine; a clear error when the engine is unreachable."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as error:
        raise SandboxError(f"the Docker engine is not reachable: {error}") from error
    return client


@dataclass(frozen=True)
class RootfsRecipe:
    """Everything that makes one image: what ``build_image`` needs to build and name it."""

    name: str
    """What the image is (``sandbox``, ``desktop``): its ``IMAGE_LABEL`` value, and the prefix
    of its cached root filesystem and build lock, so two images build side by side."""

    repository: str
    """The image repository; the tag is ``digest``."""

    digest: str
    """The hash of everything that determines the image's content."""

    suite: str
    """The Debian release debootstrap installs."""

    include: tuple[str, ...]
    """Packages debootstrap installs on minbase itself (empty: plain minbase)."""

    changes: tuple[str, ...]
    """Dockerfile instructions applied by ``docker import`` (``CMD``, ``ENV``, ``LABEL``)."""

    configure: Callable[[Path], None]
    """Turns the unpacked minbase tree (its folder is the argument) into the image's tree."""

    engine_timeout: int = 600
    """Seconds the engine may take over one call (the import of a large tree)."""

    @property
    def tag(self) -> str:
        """``<repository>:<digest>``."""
        return f"{self.repository}:{self.digest}"

    def rootfs_path(self, digest: str | None = None) -> Path:
        """The cached packed root filesystem of this recipe (or of an earlier ``digest``)."""
        return cache_directory() / f"{self.name}-rootfs-{digest or self.digest}.tar"

    def step(self, what: str) -> str:
        """A build step's name in logs and errors."""
        return f"{what} ({self.name})"


def run_step(step: str, command: Sequence[str], *, timeout: float) -> str:
    """Run one build step; raise ``SandboxError`` naming the step and carrying its stderr."""
    logger.debug("%s: %s", step, " ".join(command))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        raise SandboxError(f"image build step '{step}' timed out after {timeout:.0f} s") from error
    except OSError as error:
        raise SandboxError(f"image build step '{step}' could not run: {error}") from error
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip())[-4000:]
        raise SandboxError(
            f"image build step '{step}' failed (exit {done.returncode}): {output or 'no output'}"
        )
    return done.stdout


def run_in_root(step: str, root: Path, script: str, *, timeout: float) -> None:
    """Run a shell script as root in the chroot ``root``."""
    run_step(step, ["chroot", str(root), "/bin/sh", "-c", script], timeout=timeout)


@contextlib.contextmanager
def _build_lock(recipe: RootfsRecipe) -> Iterator[None]:
    # Two processes (say, two test sessions) asking for one image at once build it once; each
    # image has its own lock, so a desktop build (minutes) does not hold up a sandbox build.
    with (cache_directory() / f"{recipe.name}-build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_build_directory(directory: Path) -> None:
    """Delete a scratch folder, unless something is still mounted below it."""
    # A failed debootstrap can leave /proc or /sys mounted inside the target: never delete
    # through a mount.
    for point in mounts_below(directory):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=60, check=False)
    remaining = mounts_below(directory)
    if remaining:
        shown = ", ".join(map(str, remaining))
        logger.warning("leaving %s in place: still mounted: %s", directory, shown)
        return
    shutil.rmtree(directory, ignore_errors=True)


def download_packages(recipe: RootfsRecipe, mirror: str) -> Path:
    """The tarball of every package debootstrap installs, downloaded once per package set."""
    packages = recipe_digest(recipe.suite, recipe.include) if recipe.include else "plain"
    tarball = cache_directory() / f"debootstrap-{recipe.suite}-minbase-{packages}.tgz"
    if tarball.exists():
        logger.info("using cached package tarball %s", tarball)
        return tarball
    logger.info("downloading Debian %s packages from %s (a few minutes)", recipe.suite, mirror)
    scratch = Path(tempfile.mkdtemp(prefix="download-", dir=cache_directory()))
    partial = scratch / "packages.tgz"
    try:
        run_step(
            recipe.step("debootstrap --make-tarball"),
            [
                "debootstrap",
                "--variant=minbase",
                *_include_option(recipe),
                f"--make-tarball={partial}",
                recipe.suite,
                str(scratch / "target"),
                mirror,
            ],
            timeout=1800,
        )
        partial.replace(tarball)
    finally:
        remove_build_directory(scratch)
    return tarball


def _include_option(recipe: RootfsRecipe) -> list[str]:
    return [f"--include={','.join(recipe.include)}"] if recipe.include else []


def build_rootfs(
    recipe: RootfsRecipe, packages_tarball: Path, mirror: str, rootfs_tarball: Path
) -> None:
    """Unpack the packages into a scratch root, configure it and pack it into
    ``rootfs_tarball``."""
    scratch = Path(tempfile.mkdtemp(prefix=f"build-{recipe.name}-", dir=cache_directory()))
    root = scratch / "root"
    try:
        logger.info("installing the %s root filesystem with debootstrap", recipe.name)
        run_step(
            recipe.step("debootstrap"),
            [
                "debootstrap",
                "--variant=minbase",
                *_include_option(recipe),
                f"--unpack-tarball={packages_tarball}",
                recipe.suite,
                str(root),
                mirror,
            ],
            timeout=3600,
        )
        recipe.configure(root)
        logger.info("packing the %s root filesystem", recipe.name)
        partial = scratch / "rootfs.tar"
        run_step(
            recipe.step("pack"),
            [
                "tar",
                "--create",
                # POSIX (pax) headers keep the times' nanoseconds, which the engine's import
                # keeps too: caches that are checked against a folder's time to the nanosecond
                # (fontconfig's) stay valid in the image.
                "--format=posix",
                "--pax-option=delete=atime,delete=ctime",
                "--file",
                str(partial),
                "--numeric-owner",
                "--directory",
                str(root),
                "--exclude=./proc/*",
                "--exclude=./sys/*",
                "--exclude=./dev/*",
                ".",
            ],
            timeout=1800,
        )
        partial.replace(rootfs_tarball)
    finally:
        remove_build_directory(scratch)


DEBOOTSTRAP_HINT = (
    "the Docker images are built with debootstrap, which is not installed: install it "
    "with `apt-get install debootstrap` (as root), then rerun"
)
"""The one line a machine without debootstrap gets instead of a failed build."""


def require_debootstrap() -> None:
    """Make sure images can be built here: debootstrap installed, and root (for its chroot).

    Checked before any build step. As root with apt, a missing debootstrap is installed (a log
    line says so); otherwise ``SandboxError`` says in one line what to do.
    """
    installed = shutil.which("debootstrap") is not None
    if os.geteuid() != 0:
        if installed:
            raise SandboxError(
                "the Docker images are built with debootstrap, which needs root: run "
                "`make images` as root once (the images are then cached)"
            )
        raise SandboxError(
            "the Docker images are built with debootstrap, which is not installed: install "
            "it with `apt-get install debootstrap`, then run `make images` as root once"
        )
    if installed:
        return
    if not can_install():
        raise SandboxError(DEBOOTSTRAP_HINT)
    failure = install_with_apt("debootstrap", "debootstrap")
    if failure is not None:
        raise SandboxError(f"{DEBOOTSTRAP_HINT} ({failure})")


def image_id(client: docker.DockerClient, tag: str) -> str | None:
    """The id of the image ``tag`` names, or None when there is none."""
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


def _import(client: docker.DockerClient, recipe: RootfsRecipe, rootfs_tarball: Path) -> None:
    changes = [*recipe.changes, f"LABEL {RECIPE_LABEL}={recipe.digest}"]
    logger.info("importing %s into Docker as %s", rootfs_tarball.name, recipe.tag)
    step = recipe.step("docker import")
    try:
        result = client.api.import_image_from_file(
            str(rootfs_tarball), repository=recipe.repository, tag=recipe.digest, changes=changes
        )
    except docker.errors.DockerException as error:
        raise SandboxError(f"image build step '{step}' failed: {error}") from error
    if image_id(client, recipe.tag) is None:
        raise SandboxError(f"image build step '{step}' did not create {recipe.tag}: {result}")


def prune_other_recipes(client: docker.DockerClient, recipe: RootfsRecipe) -> list[str]:
    """Remove the images of the repository's earlier recipes (and their cached root
    filesystems) that no container uses; return the removed tags."""
    removed: list[str] = []
    for image in client.images.list(name=recipe.repository):
        for tag in image.tags:
            if tag == recipe.tag:
                continue
            try:
                client.images.remove(tag)
            except docker.errors.APIError:
                continue  # still used by a container: kept until that is gone
            removed.append(tag)
            recipe.rootfs_path(tag.rsplit(":", 1)[-1]).unlink(missing_ok=True)
            logger.info("removed the %s image of an earlier recipe: %s", recipe.name, tag)
    return removed


def build_image(recipe: RootfsRecipe, force: bool = False) -> str:
    """Build the recipe's image unless it exists (``force``: rebuild anyway); return its tag.

    Needs root (debootstrap, chroot) and the Docker engine. A cached call costs one engine query.
    """
    tag = recipe.tag
    client = docker_client(timeout=recipe.engine_timeout)
    try:
        if not force and image_id(client, tag) is not None:
            return tag
        with _build_lock(recipe):
            if not force and image_id(client, tag) is not None:
                return tag  # another process built it while we waited
            started = time.monotonic()
            mirror = get_settings().debian_mirror
            rootfs = recipe.rootfs_path()
            if force or not rootfs.exists():
                require_debootstrap()
                build_rootfs(recipe, download_packages(recipe, mirror), mirror, rootfs)
            else:
                logger.info("using cached root filesystem %s", rootfs)
            previous = image_id(client, tag)
            _import(client, recipe, rootfs)
            if previous is not None and previous != image_id(client, tag):
                # The tag moved to the new image: drop the old one unless a container uses it.
                with contextlib.suppress(docker.errors.APIError):
                    client.images.remove(previous)
            prune_other_recipes(client, recipe)
            logger.info("built %s in %.0f s", tag, time.monotonic() - started)
            return tag
    finally:
        client.close()

"""The sandbox image: built locally from Debian packages, never pulled from a registry.

One image, ``agentjudge/sandbox:<recipe hash>``, serves every Docker sandbox: a minimal Debian
trixie root filesystem (``debootstrap --variant=minbase``) with coreutils, findutils, procps,
Python 3 (for the resident helper, ``sandboxes.docker.resident``) and PostgreSQL 17, plus a
Postgres cluster initialised at build time in ``PGDATA_DIR`` so that a container accepts
connections within a second or two. The tag is a hash of the recipe below, so
changing the recipe builds a new image and an unchanged recipe is built once per machine.

Build steps (root and ``debootstrap`` required; ``require_debootstrap`` checks both first, and
installs debootstrap with apt when it can): download the packages into a tarball, unpack and
configure them into a root filesystem, configure it in a chroot (initdb, config, trimming), pack it
and ``docker import`` it. The package tarball and the packed root filesystem are cached under
``~/.cache/agentjudge/`` (``$XDG_CACHE_HOME`` respected), so rebuilding a removed image costs only
the import, and ``force`` rebuilds without downloading again.

Build from the command line: ``make images``, or ``agentjudge sandboxes build-images [--force]``.

The Postgres superuser is ``postgres``; TCP connections need a password, which each container gets
from ``PASSWORD_ENV`` at start (``START_POSTGRES`` sets it, then runs the server).
"""

from __future__ import annotations

import asyncio
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
from collections.abc import Iterator, Sequence
from pathlib import Path

import docker
import docker.errors

from sandboxes.base import SandboxError
from sandboxes.filesystem.overlay import mounts_below
from settings import get_settings

logger = logging.getLogger(__name__)

BUILD_COMMAND = "make images (agentjudge sandboxes build-images)"
"""How a person builds the image; quoted by errors about a missing image."""

REPOSITORY = "agentjudge/sandbox"
"""The image repository; the tag is the recipe hash."""

IMAGE_LABEL = "agentjudge.image"
"""Label naming what an image is (``sandbox`` for the base image)."""

SUITE = "trixie"

PG_MAJOR = 17
"""Debian trixie's Postgres: 16 or later, so the runtime's sandbox roles may hold CREATEROLE."""

PACKAGES = (f"postgresql-{PG_MAJOR}", "procps", "locales", "python3")
"""Added to minbase (which already has coreutils, findutils, tar, util-linux). Python runs the
resident helper of every sandbox container (``sandboxes.docker.resident``)."""

PG_BIN = f"/usr/lib/postgresql/{PG_MAJOR}/bin"
PGDATA_DIR = "/var/lib/agentjudge/pgdata"
"""The pre-initialised cluster, owned by ``postgres``."""
STAGING_DIR = "/var/lib/agentjudge/stage"
"""Where the resident helper unpacks archives and copies snapshots before they become the tree."""
START_POSTGRES = "/usr/local/bin/agentjudge-postgres"
"""Sets the superuser password from ``PASSWORD_ENV``, then execs the server (run as postgres)."""
PASSWORD_ENV = "AGENTJUDGE_PG_PASSWORD"
SUPERUSER = "postgres"
PG_PORT = 5432

_START_SCRIPT = f"""#!/bin/sh
# Starts the image's Postgres cluster; ${PASSWORD_ENV} becomes the superuser's password.
set -eu
password="${{{PASSWORD_ENV}:-}}"
unset {PASSWORD_ENV}
if [ -n "$password" ]; then
    case "$password" in
        *[!A-Za-z0-9]*) echo "{PASSWORD_ENV} must be letters and digits" >&2; exit 2 ;;
    esac
    printf "ALTER ROLE {SUPERUSER} PASSWORD '%s'\\n" "$password" \\
        | postgres --single -D "$PGDATA" postgres >/dev/null
fi
exec postgres -D "$PGDATA"
"""

_POSTGRES_CONF = """
# agentjudge: throwaway sandboxes favour start-up and write speed over durability.
listen_addresses = '*'
port = 5432
unix_socket_directories = '/tmp'
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
jit = off
shared_buffers = 64MB
max_wal_size = 1GB
checkpoint_timeout = 30min
"""

_PG_HBA = """
# agentjudge: containers are reached through a published port (from the bridge gateway).
host all all 0.0.0.0/0 scram-sha-256
host all all ::/0 scram-sha-256
"""

# Runs in the chroot as root, before initdb.
_PREPARE = f"""set -eu
# The libc locales datasets ask for as collations (MCPMark's databases sorted as en_US.utf8).
localedef -i en_US -f UTF-8 en_US.UTF-8
rm -rf /var/lib/postgresql/{PG_MAJOR}/main /etc/postgresql/{PG_MAJOR}/main
mkdir -p {PGDATA_DIR} {STAGING_DIR}
chown postgres:postgres {PGDATA_DIR}
chmod 700 {PGDATA_DIR} {STAGING_DIR}
"""

# Runs in the chroot as the postgres user.
_INITDB = [
    f"{PG_BIN}/initdb",
    "--pgdata",
    PGDATA_DIR,
    "--username",
    SUPERUSER,
    "--encoding",
    "UTF8",
    "--locale",
    "C.UTF-8",
    "--auth-local",
    "trust",
    "--auth-host",
    "scram-sha-256",
    "--no-sync",
    "--no-instructions",
]

# Runs in the chroot as root, after initdb: configuration and trimming.
_FINISH = f"""set -eu
cat >> {PGDATA_DIR}/postgresql.conf <<'EOF'
{_POSTGRES_CONF}
EOF
cat >> {PGDATA_DIR}/pg_hba.conf <<'EOF'
{_PG_HBA}
EOF
cat > {START_POSTGRES} <<'EOF'
{_START_SCRIPT}EOF
chmod 755 {START_POSTGRES}
# Dead weight for a server started directly: LLVM (JIT is off; only llvmjit.so links it) and
# Perl (only postgresql-common's cluster wrappers use it). About 180 MB.
dpkg --purge --force-depends $(dpkg-query -W -f '${{Package}}\\n' \\
    'libllvm*' 'libz3-*' perl 'perl-modules-*' 'libperl5*' 2>/dev/null) >/dev/null
rm -rf /usr/lib/postgresql/{PG_MAJOR}/lib/llvmjit* /usr/lib/postgresql/{PG_MAJOR}/lib/bitcode
rm -rf /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/* \\
    /usr/share/i18n/* /usr/share/postgresql/{PG_MAJOR}/man \\
    /var/cache/apt/archives/*.deb /var/lib/apt/lists/* /var/log/*.log /tmp/* /var/tmp/*
"""

_CHANGES = (
    'CMD ["sleep", "infinity"]',
    f"ENV PATH={PG_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    f"ENV PGDATA={PGDATA_DIR}",
    "ENV LANG=C.UTF-8",
    f"LABEL {IMAGE_LABEL}=sandbox",
)

_RECIPE_VERSION = 1


def _hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def recipe_hash() -> str:
    """A short hash of everything that determines the image's content."""
    return _hash(_RECIPE_VERSION, SUITE, PACKAGES, _PREPARE, _INITDB, _FINISH, _CHANGES)


def sandbox_image_tag() -> str:
    """The tag of the image the current recipe builds: ``agentjudge/sandbox:<recipe hash>``."""
    return f"{REPOSITORY}:{recipe_hash()}"


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


def engine_answers(timeout: int = 3) -> bool:
    """Whether a Docker engine answers here within ``timeout`` seconds (for choosing a default
    backend; ``docker_client`` is the call that explains a failure)."""
    try:
        client = docker.from_env(timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # no socket, refused, timed out, an engine error: all mean "no"
        return False


def _run(step: str, command: Sequence[str], *, timeout: float) -> str:
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


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    # Two processes (say, two test sessions) asking for the image at once build it once.
    with (cache_directory() / "build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_build_directory(directory: Path) -> None:
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


def _download(mirror: str) -> Path:
    """The tarball of every package debootstrap installs, downloaded once per package set."""
    packages = ",".join(PACKAGES)
    tarball = cache_directory() / f"debootstrap-{SUITE}-minbase-{_hash(SUITE, PACKAGES)}.tgz"
    if tarball.exists():
        logger.info("using cached package tarball %s", tarball)
        return tarball
    logger.info("downloading Debian %s packages from %s (a few minutes)", SUITE, mirror)
    scratch = Path(tempfile.mkdtemp(prefix="download-", dir=cache_directory()))
    partial = scratch / "packages.tgz"
    try:
        _run(
            "debootstrap --make-tarball",
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={packages}",
                f"--make-tarball={partial}",
                SUITE,
                str(scratch / "target"),
                mirror,
            ],
            timeout=1800,
        )
        partial.replace(tarball)
    finally:
        _remove_build_directory(scratch)
    return tarball


def _build_rootfs(packages_tarball: Path, mirror: str, rootfs_tarball: Path) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="build-", dir=cache_directory()))
    root = scratch / "root"
    try:
        logger.info("installing the root filesystem with debootstrap")
        _run(
            "debootstrap",
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(PACKAGES)}",
                f"--unpack-tarball={packages_tarball}",
                SUITE,
                str(root),
                mirror,
            ],
            timeout=1800,
        )
        logger.info("initialising the Postgres cluster and trimming the root filesystem")
        _run("prepare", ["chroot", str(root), "/bin/sh", "-c", _PREPARE], timeout=120)
        _run(
            "initdb",
            ["chroot", "--userspec=postgres:postgres", str(root), "env", "LANG=C.UTF-8", *_INITDB],
            timeout=300,
        )
        _run("configure", ["chroot", str(root), "/bin/sh", "-c", _FINISH], timeout=300)
        logger.info("packing the root filesystem")
        partial = scratch / "rootfs.tar"
        _run(
            "pack",
            [
                "tar",
                "--create",
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
            timeout=900,
        )
        partial.replace(rootfs_tarball)
    finally:
        _remove_build_directory(scratch)


DEBOOTSTRAP_HINT = (
    "the Docker sandbox image is built with debootstrap, which is not installed: install it "
    "with `apt-get install debootstrap` (as root), then rerun"
)
"""The one line a machine without debootstrap gets instead of a failed build."""

_APT_TIMEOUT = 600.0


def _apt_get(*arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", *arguments]
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=environment,
            timeout=_APT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess(command, 1, "", str(error))


def require_debootstrap() -> None:
    """Make sure the image can be built here: debootstrap installed, and root (for its chroot).

    Checked before any build step. As root with apt, a missing debootstrap is installed (a log
    line says so); otherwise ``SandboxError`` says in one line what to do.
    """
    installed = shutil.which("debootstrap") is not None
    if os.geteuid() != 0:
        if installed:
            raise SandboxError(
                "the Docker sandbox image is built with debootstrap, which needs root: run "
                "`make images` as root once (the image is then cached)"
            )
        raise SandboxError(
            "the Docker sandbox image is built with debootstrap, which is not installed: install "
            "it with `apt-get install debootstrap`, then run `make images` as root once"
        )
    if installed:
        return
    if shutil.which("apt-get") is None:
        raise SandboxError(DEBOOTSTRAP_HINT)
    logger.warning("debootstrap is not installed: installing it with apt-get")
    done = _apt_get("install", "-y", "-qq", "debootstrap")
    if done.returncode != 0:  # stale or missing package lists: refresh them once
        _apt_get("update", "-qq")
        done = _apt_get("install", "-y", "-qq", "debootstrap")
    if done.returncode != 0 or shutil.which("debootstrap") is None:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise SandboxError(f"{DEBOOTSTRAP_HINT} (apt-get install debootstrap failed: {last})")


def _image_id(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


def _image_exists(client: docker.DockerClient, tag: str) -> bool:
    return _image_id(client, tag) is not None


def _import(client: docker.DockerClient, rootfs_tarball: Path, tag: str) -> None:
    repository, _, version = tag.partition(":")
    changes = [*_CHANGES, f"LABEL agentjudge.recipe={version}"]
    logger.info("importing %s into Docker as %s", rootfs_tarball.name, tag)
    try:
        result = client.api.import_image_from_file(
            str(rootfs_tarball), repository=repository, tag=version, changes=changes
        )
    except docker.errors.DockerException as error:
        raise SandboxError(f"image build step 'docker import' failed: {error}") from error
    if not _image_exists(client, tag):
        raise SandboxError(f"image build step 'docker import' did not create {tag}: {result}")


def build_sandbox_image(force: bool = False) -> str:
    """Build the sandbox image unless it exists (``force``: rebuild anyway); return its tag.

    Needs root (debootstrap, chroot) and the Docker engine. A cached call costs one engine query.
    """
    tag = sandbox_image_tag()
    client = docker_client(timeout=600)
    try:
        if not force and _image_exists(client, tag):
            return tag
        with _build_lock():
            if not force and _image_exists(client, tag):
                return tag  # another process built it while we waited
            started = time.monotonic()
            mirror = get_settings().debian_mirror
            rootfs = cache_directory() / f"sandbox-rootfs-{recipe_hash()}.tar"
            if force or not rootfs.exists():
                require_debootstrap()
                _build_rootfs(_download(mirror), mirror, rootfs)
            else:
                logger.info("using cached root filesystem %s", rootfs)
            previous = _image_id(client, tag)
            _import(client, rootfs, tag)
            if previous is not None and previous != _image_id(client, tag):
                # The tag moved to the new image: drop the old one unless a container uses it.
                with contextlib.suppress(docker.errors.APIError):
                    client.images.remove(previous)
            _prune_other_recipes(client, tag)
            logger.info("built %s in %.0f s", tag, time.monotonic() - started)
            return tag
    finally:
        client.close()


def _prune_other_recipes(client: docker.DockerClient, keep: str) -> list[str]:
    """Remove sandbox images of earlier recipes (and their cached root filesystems) that no
    container uses; return the removed tags."""
    removed: list[str] = []
    for image in client.images.list(name=REPOSITORY):
        for tag in image.tags:
            if tag == keep:
                continue
            try:
                client.images.remove(tag)
            except docker.errors.APIError:
                continue  # still used by a container: kept until that is gone
            removed.append(tag)
            recipe = tag.rsplit(":", 1)[-1]
            (cache_directory() / f"sandbox-rootfs-{recipe}.tar").unlink(missing_ok=True)
            logger.info("removed the image of an earlier recipe: %s", tag)
    return removed


async def build_sandbox_image_async(force: bool = False) -> str:
    """``build_sandbox_image`` in a worker thread."""
    return await asyncio.to_thread(build_sandbox_image, force)


def ensure_sandbox_image() -> str:
    """The sandbox image's tag, building the image first when it is missing."""
    return build_sandbox_image(force=False)


async def ensure_sandbox_image_async() -> str:
    """``ensure_sandbox_image`` in a worker thread."""
    return await asyncio.to_thread(ensure_sandbox_image)

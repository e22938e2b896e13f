"""The sandbox image: built locally from Debian packages, never pulled from a registry.

One image, ``agentjudge/sandbox:<recipe hash>``, serves every Docker sandbox: a minimal Debian
trixie root filesystem (``debootstrap --variant=minbase``) with coreutils, findutils, procps,
Python 3 (for the resident helper, ``sandboxes.docker.resident``) and PostgreSQL 17, plus a
Postgres cluster initialised at build time in ``PGDATA_DIR`` so that a container accepts
connections within a second or two. The tag is a hash of the recipe below, so
changing the recipe builds a new image and an unchanged recipe is built once per machine.

Built by ``sandboxes.docker.rootfs`` (root and ``debootstrap`` required): the packages are
unpacked into a root filesystem, which is configured in a chroot (initdb, config, trimming),
packed and imported; the package tarball and the packed root filesystem are cached, so
rebuilding a removed image costs only the import.

Build from the command line: ``make images``, or ``agentjudge sandboxes build-images [--force]``.

The Postgres superuser is ``postgres``; TCP connections need a password, which each container gets
from ``PASSWORD_ENV`` at start (``START_POSTGRES`` sets it, then runs the server).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import docker

from sandboxes.docker.rootfs import (
    IMAGE_LABEL,
    RootfsRecipe,
    build_image,
    recipe_digest,
    run_in_root,
    run_step,
)

logger = logging.getLogger(__name__)

BUILD_COMMAND = "make images (agentjudge sandboxes build-images)"
"""How a person builds the image; quoted by errors about a missing image."""

REPOSITORY = "agentjudge/sandbox"
"""The image repository; the tag is the recipe hash."""

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


def recipe_hash() -> str:
    """A short hash of everything that determines the image's content."""
    return recipe_digest(_RECIPE_VERSION, SUITE, PACKAGES, _PREPARE, _INITDB, _FINISH, _CHANGES)


def sandbox_image_tag() -> str:
    """The tag of the image the current recipe builds: ``agentjudge/sandbox:<recipe hash>``."""
    return f"{REPOSITORY}:{recipe_hash()}"


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


def _configure(root: Path) -> None:
    logger.info("initialising the Postgres cluster and trimming the root filesystem")
    run_in_root("prepare (sandbox)", root, _PREPARE, timeout=120)
    run_step(
        "initdb (sandbox)",
        ["chroot", "--userspec=postgres:postgres", str(root), "env", "LANG=C.UTF-8", *_INITDB],
        timeout=300,
    )
    run_in_root("configure (sandbox)", root, _FINISH, timeout=300)


def sandbox_recipe() -> RootfsRecipe:
    """The current recipe of the sandbox image, for ``sandboxes.docker.rootfs``."""
    return RootfsRecipe(
        name="sandbox",
        repository=REPOSITORY,
        digest=recipe_hash(),
        suite=SUITE,
        include=PACKAGES,
        changes=_CHANGES,
        configure=_configure,
    )


def build_sandbox_image(force: bool = False) -> str:
    """Build the sandbox image unless it exists (``force``: rebuild anyway); return its tag.

    Needs root (debootstrap, chroot) and the Docker engine. A cached call costs one engine query.
    """
    return build_image(sandbox_recipe(), force)


async def build_sandbox_image_async(force: bool = False) -> str:
    """``build_sandbox_image`` in a worker thread."""
    return await asyncio.to_thread(build_sandbox_image, force)


def ensure_sandbox_image() -> str:
    """The sandbox image's tag, building the image first when it is missing."""
    return build_sandbox_image(force=False)


async def ensure_sandbox_image_async() -> str:
    """``ensure_sandbox_image`` in a worker thread."""
    return await asyncio.to_thread(ensure_sandbox_image)

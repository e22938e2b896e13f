"""Building a task's database the way MCPMark does: archives, preparation scripts, collations.

Owns three parts of an initial state beyond a plain SQL seed (``dataset.models.SqlSeedState``):

* **``pg_dump`` archives** (custom format, first bytes ``PGDMP``) are turned into the SQL they
  stand for by ``pg_restore`` (the newest one found: the pgserver wheel's, the system's), run in
  the dataset-code box since the archive is untrusted input, without ownership statements (the
  recorded owner does not exist here; the seed role owns everything). The SQL then runs as any
  seed does (``sandboxes.postgres.seeding``).
* **Preparation scripts** (MCPMark's ``prepare_environment.py``) run after the seed, in the box,
  with MCPMark's ``POSTGRES_*`` variables naming the template database and its seed role,
  reached through a relay that admits only that role and database. Roles they create are the
  seed role's, dropped with the template.
* **Collations**: a database's default collation is fixed when it is created from
  ``template0``; ``collation_clause`` says how, for libc locales (``en_US.utf8``) and ICU ones
  (``en-US-x-icu``), and ``explain_collation_error`` turns the server's refusal into what to do.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

from dataset.models import PG_DUMP_MAGIC
from sandboxes.base import SandboxError
from sandboxes.confinement import WORK_MOUNT, BoxSpec, remove_tree, run_in_box, run_python_script
from sandboxes.postgres.admin import quote_literal
from sandboxes.postgres.embedded import wheel_binaries
from sandboxes.postgres.relay import postgres_relay
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.runs import current_run

OUTPUT_LIMIT = 4_000
"""Characters of a failed preparation's output quoted in its error."""

ICU_SUFFIX = "-x-icu"
"""Postgres names ICU collations ``<language tag>-x-icu`` (``en-US-x-icu``, ``und-x-icu``)."""

_RESTRICT = re.compile(rb"^\\(?:un)?restrict\b[^\n]*\n?", re.MULTILINE)
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


def is_archive(seed: bytes) -> bool:
    """Whether ``seed`` is a ``pg_dump`` custom-format archive rather than SQL."""
    return seed.startswith(PG_DUMP_MAGIC)


@cache
def _version(binary: Path) -> tuple[int, int]:
    try:
        shown = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return (0, 0)
    found = _VERSION.search(shown)
    return (int(found.group(1)), int(found.group(2) or 0)) if found else (0, 0)


def restore_binaries() -> list[Path]:
    """Every ``pg_restore`` found, newest first: the pgserver wheel's, the system's packages'
    (``/usr/lib/postgresql/<major>/bin``) and the one on ``PATH``."""
    found: list[Path] = []
    wheel = wheel_binaries()
    if wheel is not None:
        found.append(wheel / "pg_restore")
    found.extend(sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_restore")))
    on_path = shutil.which("pg_restore")
    if on_path:
        found.append(Path(on_path))
    usable = [path for path in dict.fromkeys(found) if path.is_file()]
    return sorted(usable, key=_version, reverse=True)


async def archive_to_sql(archive: Path, *, timeout: float) -> bytes:
    """The SQL that the ``pg_dump`` archive ``archive`` stands for, ownership left out."""
    binaries = await asyncio.to_thread(restore_binaries)
    if not binaries:
        raise SandboxError(
            f"seed {archive} is a pg_dump archive, and no pg_restore was found to read it"
            " (install the pgserver wheel or a PostgreSQL client package)"
        )
    binary = binaries[0]
    folder = current_run().directory() / current_run().new_name("restore")
    try:
        run = await run_in_box(
            BoxSpec(
                command=[
                    str(binary),
                    "--no-owner",
                    "--file",
                    str(WORK_MOUNT / "seed.sql"),
                    str(archive),
                ],
                cwd=archive.parent,
                read_only=[archive.parent, binary.parent.parent],
                timeout=timeout,
            ),
            folder=folder,
        )
        if run.timed_out:
            raise SandboxError(f"pg_restore did not read seed {archive} within {timeout:g} s")
        if run.exit_code != 0:
            raise SandboxError(
                f"pg_restore ({binary}) cannot read seed {archive}:"
                f" {' '.join(run.text(OUTPUT_LIMIT).split())}"
            )
        script = await asyncio.to_thread((folder / "work" / "seed.sql").read_bytes)
    finally:
        await asyncio.to_thread(remove_tree, folder)
    # pg_restore 17.6+ fences its output with psql meta-commands; they guard psql, not us.
    return _RESTRICT.sub(b"", script)


async def run_preparation(
    database: PostgresConnectionInfo, script: Path, task_dir: Path, *, timeout: float
) -> None:
    """Run the preparation ``script`` (in ``task_dir``) against ``database`` in the box, with
    MCPMark's ``POSTGRES_*`` variables; a non-zero exit or a timeout raises ``SandboxError``
    quoting its output."""
    async with postgres_relay(database) as relayed:
        run = await run_python_script(
            script,
            [],
            relayed.info.verifier_environment(),
            timeout,
            read_only=relayed.bind,
            task_dir=task_dir,
        )
    if run.timed_out:
        raise SandboxError(f"preparation {script} did not finish within {timeout:g} s")
    if run.exit_code != 0:
        output = run.text(OUTPUT_LIMIT).strip() or "(no output)"
        raise SandboxError(f"preparation {script} failed (exit code {run.exit_code}): {output}")


def collation_clause(collation: str, version: int) -> str:
    """The ``CREATE DATABASE`` options that make ``collation`` a new database's default (the
    template must be ``template0``); ``version`` is the server's ``server_version_num``."""
    if collation.endswith(ICU_SUFFIX):
        if version and version < 150000:
            raise SandboxError(
                f"collation {collation}: ICU default collations need PostgreSQL 15 or later"
            )
        tag = collation.removesuffix(ICU_SUFFIX)
        return f" LOCALE_PROVIDER icu ICU_LOCALE {quote_literal(tag)}"
    provider = " LOCALE_PROVIDER libc" if version >= 150000 else ""
    name = quote_literal(collation)
    return f"{provider} LC_COLLATE {name} LC_CTYPE {name}"


def explain_collation_error(collation: str, message: str) -> str:
    """The server's refusal of ``collation`` (``message``), with what to do about it."""
    if collation.endswith(ICU_SUFFIX) and "ICU" in message:
        return (
            f"collation {collation}: {message}; this server is built without ICU (the pgserver"
            " wheel behind the embedded backend is): use --backend docker, a --dsn server built"
            " with ICU, or a libc collation such as en_US.utf8"
        )
    if "locale" in message.lower():
        language = collation.split(".", maxsplit=1)[0]
        return (
            f"collation {collation}: {message}; the server has no such locale (the embedded"
            f" backend uses this machine's: on Debian install 'locales' and run"
            f" 'localedef -i {language} -f UTF-8 {language}.UTF-8', or use --backend docker)"
        )
    return f"collation {collation}: {message}"

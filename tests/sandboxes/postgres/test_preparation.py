"""Initial states built as MCPMark builds them: preparation scripts, pg_dump archives, collations.

Every test runs on each backend (embedded, external, Docker): a preparation script runs in the
dataset-code box against the template with MCPMark's ``POSTGRES_*`` variables, and the roles it
makes go with the provider; a failing or endless script fails its task with its output; a
``pg_dump`` archive seeds like the SQL it stands for; a collation decides how text sorts, and a
collation the server cannot provide is refused with what to do about it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dataset.models import SqlSeedState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres.embedded import EmbeddedPostgresCluster, wheel_binaries
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from tests.sandboxes.postgres.helpers import SHOP_SEED, fetch, role_exists, write_task

NAMES = ["A Cor Do Sol", "Abraham, Martin And John", "aces high", "Zebra", "_under"]
"""Titles whose order depends on the collation."""


def prepared_task(folder: Path, script: str, *, seed: str | None = None) -> tuple[Task, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prepare_environment.py").write_text(script)
    if seed is not None:
        (folder / "seed.sql").write_text(seed)
    state = SqlSeedState(
        path="seed.sql" if seed is not None else None, preparation="prepare_environment.py"
    )
    return Task(
        id=folder.name,
        domain="ds",
        subdomain="postgres",
        instruction="Audit the roles.",
        initial_state=state,
    ), folder


PREPARE = """
import os, sys
import psycopg2
names = ["POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_USERNAME", "POSTGRES_PASSWORD",
         "POSTGRES_DATABASE"]
missing = [name for name in names if not os.environ.get(name)]
if missing:
    sys.exit(f"missing {missing}")
conn = psycopg2.connect(host=os.environ["POSTGRES_HOST"], port=os.environ["POSTGRES_PORT"],
                        user=os.environ["POSTGRES_USERNAME"],
                        password=os.environ["POSTGRES_PASSWORD"],
                        dbname=os.environ["POSTGRES_DATABASE"])
conn.autocommit = True
cur = conn.cursor()
cur.execute("SELECT count(*) FROM customers")  # the seed ran first
seeded = cur.fetchone()[0]
cur.execute("CREATE TABLE audit_notes (note text)")
cur.execute("INSERT INTO audit_notes VALUES (%s)", (f"seeded {seeded}",))
cur.execute("CREATE ROLE ROLE_NAME LOGIN PASSWORD 'pw'")
cur.execute("GRANT SELECT ON audit_notes TO ROLE_NAME")
print("prepared")
"""


async def test_a_preparation_runs_after_the_seed_and_its_roles_go_with_the_provider(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    role = f"auditor_{os.getpid()}_{tmp_path.name[-6:]}".lower()
    task, folder = prepared_task(
        tmp_path / "audit", PREPARE.replace("ROLE_NAME", role), seed=SHOP_SEED
    )
    sandbox = await provider.create(task, folder)
    async with sandbox.connect() as conn:
        notes = await conn.fetch("SELECT note FROM audit_notes")
        customers = await conn.fetchval("SELECT count(*) FROM customers")
        granted = await conn.fetchval(
            "SELECT has_table_privilege($1, 'audit_notes', 'SELECT')", role
        )
    assert [row["note"] for row in notes] == [f"seeded {customers}"]
    assert granted is True
    assert await role_exists(provider.cluster, role)
    await sandbox.destroy()
    await provider.aclose()
    assert not await role_exists(provider.cluster, role)  # the provider fixture checks the rest


async def test_a_failing_preparation_fails_its_task_once_with_its_output(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    script = "import sys\nprint('building the audit tables')\nsys.exit('no such schema: hr')\n"
    task, folder = prepared_task(tmp_path / "broken", script)
    with pytest.raises(SandboxError) as first:
        await provider.create(task, folder)
    message = str(first.value)
    assert "prepare_environment.py failed (exit code 1)" in message
    assert "building the audit tables" in message
    assert "no such schema: hr" in message
    with pytest.raises(SandboxError) as second:  # cached: the script does not run again
        await provider.create(task, folder)
    assert str(second.value) == message


async def test_an_endless_preparation_is_stopped_at_the_seed_timeout(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    provider = ClusterPostgresProvider(cluster, seed_timeout=1.5)
    try:
        task, folder = prepared_task(tmp_path / "endless", "import time\ntime.sleep(60)\n")
        with pytest.raises(SandboxError, match=r"did not finish within 1\.5 s"):
            await provider.create(task, folder)
    finally:
        await provider.aclose()


@pytest.fixture(scope="session")
def shop_archive(
    embedded_cluster: EmbeddedPostgresCluster, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The shop database as a pg_dump custom-format archive, made by the wheel's pg_dump."""
    import asyncio

    binaries = wheel_binaries()
    assert binaries is not None, "the pgserver wheel is a dependency of the runtime"
    folder = tmp_path_factory.mktemp("archive")
    database = f"archive_source_{os.getpid()}"
    admin_info = embedded_cluster.admin
    asyncio.run(fetch(admin_info, f"CREATE DATABASE {database}"))
    try:
        conn_info = admin_info.with_database(database)
        for statement in SHOP_SEED.split(";"):
            if statement.strip():
                asyncio.run(fetch(conn_info, statement))
        archive = folder / "shop.backup"
        subprocess.run(
            [
                str(binaries / "pg_dump"),
                "--format=custom",
                "--host",
                admin_info.host,
                "--port",
                str(admin_info.port),
                "--username",
                admin_info.user,
                "--file",
                str(archive),
                database,
            ],
            env={**os.environ, "PGPASSWORD": admin_info.password},
            check=True,
            timeout=60,
        )
    finally:
        asyncio.run(fetch(admin_info, f"DROP DATABASE {database}"))
    return archive


async def test_a_pg_dump_archive_seeds_like_its_sql(
    provider: ClusterPostgresProvider, tmp_path: Path, shop_archive: Path
) -> None:
    assert shop_archive.read_bytes().startswith(b"PGDMP")
    folder = tmp_path / "from-archive"
    folder.mkdir()
    (folder / "seed.dump").write_bytes(shop_archive.read_bytes())
    task = Task(
        id="from-archive",
        domain="ds",
        subdomain="postgres",
        instruction="Look at the shop.",
        initial_state=SqlSeedState(path="seed.dump"),
    )
    reference_task, reference_folder = write_task(tmp_path / "from-sql", SHOP_SEED, "from-sql")
    restored = await provider.create(task, folder)
    reference = await provider.create(reference_task, reference_folder)
    query = "SELECT * FROM customers ORDER BY 1"
    async with restored.connect() as left, reference.connect() as right:
        assert [tuple(row) for row in await left.fetch(query)] == [
            tuple(row) for row in await right.fetch(query)
        ]
        # The archive's recorded owner does not exist here: the seed's role owns the tables.
        assert await left.fetchval("SELECT count(*) FROM customers") > 0


async def test_a_corrupt_archive_is_refused_naming_the_file(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    folder = tmp_path / "corrupt"
    folder.mkdir()
    (folder / "seed.dump").write_bytes(b"PGDMP" + b"\x00\x01garbage" * 10)
    task = Task(
        id="corrupt",
        domain="ds",
        subdomain="postgres",
        instruction="Look.",
        initial_state=SqlSeedState(path="seed.dump"),
    )
    with pytest.raises(SandboxError, match=r"pg_restore .* cannot read seed .*seed\.dump"):
        await provider.create(task, folder)


async def sorted_names(
    provider: ClusterPostgresProvider, folder: Path, collation: str
) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    values = ", ".join("('" + name.replace("'", "''") + "')" for name in NAMES)
    (folder / "seed.sql").write_text(
        f"CREATE TABLE titles (name text);\nINSERT INTO titles VALUES {values};\n"
    )
    task = Task(
        id=folder.name,
        domain="ds",
        subdomain="postgres",
        instruction="Rank the titles.",
        initial_state=SqlSeedState(collation=collation),
    )
    sandbox = await provider.create(task, folder)
    async with sandbox.connect() as conn:
        return [row["name"] for row in await conn.fetch("SELECT name FROM titles ORDER BY name")]


async def test_a_collation_decides_how_text_sorts(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    byte_order = await sorted_names(provider, tmp_path / "c", "C")
    english = await sorted_names(provider, tmp_path / "en", "en_US.utf8")
    assert byte_order == sorted(NAMES, key=lambda name: name.encode())
    # glibc's en_US: case and punctuation count only after the letters.
    assert english == ["Abraham, Martin And John", "aces high", "A Cor Do Sol", "_under", "Zebra"]


async def test_icu_collations_work_where_the_server_has_icu_and_are_explained_where_not(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    # A server built with ICU makes its ICU collations at initdb; one without has none of them
    # (PostgreSQL 16's own "unicode" collation is listed either way).
    rows = await fetch(
        provider.cluster.admin,
        "SELECT count(*) AS n FROM pg_collation WHERE collname = 'en-US-x-icu'",
    )
    if rows[0]["n"]:
        names = await sorted_names(provider, tmp_path / "icu", "en-US-x-icu")
        # ICU's en-US: spaces and punctuation sort before letters, case after.
        assert names == ["_under", "A Cor Do Sol", "Abraham, Martin And John", "aces high", "Zebra"]
    else:
        with pytest.raises(SandboxError, match=r"en-US-x-icu.*built without ICU.*--backend docker"):
            await sorted_names(provider, tmp_path / "icu", "en-US-x-icu")


async def test_a_locale_the_server_lacks_is_refused_with_how_to_get_it(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    with pytest.raises(SandboxError, match=r"xx_YY\.utf8.*localedef -i xx_YY"):
        await sorted_names(provider, tmp_path / "nowhere", "xx_YY.utf8")

"""The external backend: DSN parsing and the checks ``start`` makes on a user's server."""

from __future__ import annotations

import getpass
import secrets

import pytest

from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.external import ExternalPostgresCluster, parse_dsn
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from tests.sandboxes.postgres.helpers import fetch


def test_urls_and_keyword_strings_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGUSER", raising=False)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    assert parse_dsn("postgresql://bob:p%40ss@db.example:6543/shop") == PostgresConnectionInfo(
        host="db.example", port=6543, user="bob", password="p@ss", database="shop"
    )
    assert parse_dsn("postgres://bob@/shop?host=/run/pg&port=5433") == PostgresConnectionInfo(
        host="/run/pg", port=5433, user="bob", password="", database="shop"
    )
    assert parse_dsn("host=127.0.0.1 user=eve password='a b' dbname=x") == (
        PostgresConnectionInfo(
            host="127.0.0.1", port=5432, user="eve", password="a b", database="x"
        )
    )
    assert parse_dsn("postgresql://") == PostgresConnectionInfo(
        host="localhost", port=5432, user=getpass.getuser(), password="", database="postgres"
    )
    monkeypatch.setenv("PGPASSWORD", "from-env")
    assert parse_dsn("postgresql://bob@h/d").password == "from-env"
    # The URL form round-trips through PostgresConnectionInfo.dsn, sockets included.
    info = PostgresConnectionInfo(
        host="/tmp/x y", port=5432, user="a", password="p:w", database="d"
    )
    assert parse_dsn(info.dsn) == info
    for broken in ("postgresql://h:notaport/d", "host=a nonsense"):
        with pytest.raises(SandboxError, match="DSN"):
            parse_dsn(broken)


async def test_an_unreachable_server_is_a_clear_error() -> None:
    cluster = ExternalPostgresCluster("postgresql://nobody@127.0.0.1:1/postgres")
    with pytest.raises(SandboxError, match=r"cannot reach Postgres at nobody@127\.0\.0\.1:1"):
        await cluster.start()


async def test_a_role_without_createdb_and_createrole_is_refused(
    embedded_cluster: EmbeddedPostgresCluster,
) -> None:
    role = f"weak_{secrets.token_hex(4)}"
    await fetch(embedded_cluster.admin, f"CREATE ROLE {role} LOGIN CREATEDB PASSWORD 'weak'")
    await fetch(embedded_cluster.admin, f"GRANT CONNECT ON DATABASE postgres TO {role}")
    try:
        cluster = ExternalPostgresCluster(
            embedded_cluster.admin.model_copy(update={"user": role, "password": "weak"})
        )
        with pytest.raises(SandboxError, match="needs SUPERUSER, or both CREATEDB and CREATEROLE"):
            await cluster.start()
        missing = ExternalPostgresCluster(embedded_cluster.admin.with_database("no_such_db"))
        with pytest.raises(SandboxError, match="cannot connect"):
            await missing.start()
    finally:
        await fetch(embedded_cluster.admin, f"REVOKE CONNECT ON DATABASE postgres FROM {role}")
        await fetch(embedded_cluster.admin, f"DROP ROLE {admin.quote_ident(role)}")


async def test_stop_leaves_the_server_alone(embedded_cluster: EmbeddedPostgresCluster) -> None:
    cluster = ExternalPostgresCluster(embedded_cluster.admin.dsn)
    await cluster.start()
    assert cluster.backend == "external"
    assert cluster.admin == embedded_cluster.admin
    await cluster.stop()
    assert (await fetch(embedded_cluster.admin, "SELECT 1 AS one"))[0]["one"] == 1

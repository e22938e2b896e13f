"""The embedded backend: a private server from the pgserver wheel, on a Unix socket only."""

from __future__ import annotations

import secrets
from pathlib import Path

import asyncpg
import psutil
import pytest

from sandboxes.base import SandboxError
from sandboxes.postgres import embedded
from sandboxes.postgres.embedded import (
    IN_MEMORY_ENV,
    EmbeddedPostgresCluster,
    data_parents,
    memory_parent,
)
from sandboxes.postgres.leftovers import collect_embedded_leftovers
from sandboxes.runs import current_run, workdir
from tests.sandboxes.postgres.helpers import fetch


async def test_start_tune_and_stop() -> None:
    cluster = EmbeddedPostgresCluster(in_memory=False)
    with pytest.raises(SandboxError, match="not started"):
        _ = cluster.admin
    await cluster.start()
    try:
        directory, pid = cluster.data_directory, cluster.pid
        assert directory is not None
        assert pid is not None
        assert directory.parent == workdir()
        assert directory.name.startswith(current_run().prefix + "pg")
        assert (directory / "PG_VERSION").read_text().strip() == "16"
        assert psutil.Process(pid).is_running()
        await cluster.start()  # idempotent: the same server
        assert cluster.pid == pid
        settings = {
            row["name"]: row["setting"]
            for row in await fetch(
                cluster.admin,
                "SELECT name, setting FROM pg_settings WHERE name = ANY($1)",
                [
                    "listen_addresses",
                    "fsync",
                    "full_page_writes",
                    "synchronous_commit",
                    "dynamic_shared_memory_type",
                ],
            )
        }
        assert settings == {
            "listen_addresses": "",  # no TCP at all
            "fsync": "off",
            "full_page_writes": "off",
            "synchronous_commit": "off",
            # shared memory in the data directory: a kill -9 leaves nothing in /dev/shm
            "dynamic_shared_memory_type": "mmap",
        }
        assert cluster.admin.host.startswith("/")
    finally:
        await cluster.stop()
    assert not directory.exists()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    await cluster.stop()  # idempotent
    with pytest.raises(SandboxError, match="not started"):
        _ = cluster.admin


async def test_untuned_server_keeps_durability() -> None:
    cluster = EmbeddedPostgresCluster(tuned=False, in_memory=False)
    await cluster.start()
    try:
        rows = await fetch(cluster.admin, "SELECT setting FROM pg_settings WHERE name = 'fsync'")
        assert rows[0]["setting"] == "on"
    finally:
        await cluster.stop()


async def test_in_memory_data_lives_in_shared_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IN_MEMORY_ENV, "1")
    cluster = EmbeddedPostgresCluster()
    assert cluster.in_memory
    assert not EmbeddedPostgresCluster(in_memory=False).in_memory
    await cluster.start()
    try:
        directory = cluster.data_directory
        assert directory is not None
        assert directory.parent == memory_parent()
        assert memory_parent() in data_parents()
        assert (await fetch(cluster.admin, "SELECT 1 AS one"))[0]["one"] == 1
    finally:
        await cluster.stop()
    assert not directory.exists()


def test_the_in_memory_variable_decides_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IN_MEMORY_ENV, "0")
    assert not EmbeddedPostgresCluster().in_memory
    assert EmbeddedPostgresCluster(in_memory=True).in_memory  # an argument wins
    monkeypatch.setenv(IN_MEMORY_ENV, "yes")
    assert EmbeddedPostgresCluster().in_memory


async def test_every_role_needs_its_password_on_the_socket(
    embedded_cluster: EmbeddedPostgresCluster,
) -> None:
    """pgserver's cluster trusts its socket; ours asks every role, the superuser included."""
    info = embedded_cluster.admin
    assert len(info.password) >= 32
    nameless = f"nopass_{secrets.token_hex(4)}"
    await fetch(info, f"CREATE ROLE {nameless} LOGIN")  # a role with no password at all
    try:
        await fetch(info, f"GRANT CONNECT ON DATABASE postgres TO {nameless}")
        attempts = [
            info.model_copy(update={"password": ""}),
            info.model_copy(update={"password": "wrong"}),
            info.model_copy(update={"user": nameless, "password": ""}),
            info.model_copy(update={"user": nameless, "password": "anything"}),
        ]
        for attempt in attempts:
            with pytest.raises(
                (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError)
            ):
                await fetch(attempt, "SELECT 1")
        rules = await fetch(info, "SELECT type, auth_method FROM pg_hba_file_rules")
        assert [tuple(rule) for rule in rules] == [("local", "scram-sha-256")]
    finally:
        await fetch(info, f"REVOKE CONNECT ON DATABASE postgres FROM {nameless}")
        await fetch(info, f"DROP ROLE {nameless}")


async def test_the_shared_ram_folder_outlives_the_last_server_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every run on the machine starts its servers in this one folder (it is also the default
    # scratch space): removed when it looked empty, it vanished under a run that had just made it
    # and was about to make its data directory in it, whose start then failed.
    monkeypatch.setattr(embedded, "SHARED_MEMORY", tmp_path)
    monkeypatch.setattr(embedded, "scratch_roots", list)  # collect in that folder only
    cluster = EmbeddedPostgresCluster(in_memory=True)
    await cluster.start()
    assert cluster.data_directory is not None
    assert cluster.data_directory.parent == memory_parent() == tmp_path / "agentjudge"
    await cluster.stop()
    assert memory_parent().is_dir()
    assert embedded.data_parents() == [memory_parent()]
    await collect_embedded_leftovers()
    assert memory_parent().is_dir()

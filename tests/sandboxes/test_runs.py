"""Run identity, liveness and the ordering of leftover collectors."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sandboxes import runs
from sandboxes.runs import WORKDIR_ENV, Run, current_run, run_id_of, run_is_alive, workdir


def test_names_carry_the_run_id_and_are_unique() -> None:
    run = current_run()
    first, second = run.new_name("db"), run.new_name("db")
    assert first != second
    assert run_id_of(first) == run.run_id
    assert run_id_of(run.directory().name) == run.run_id  # the run's own folder, aj_<id>
    assert first.startswith(f"aj_{run.run_id}_db_")
    assert len(first) <= 63  # a Postgres identifier


@pytest.mark.parametrize("tag", ["", "UPPER", "with-dash", "x" * 21])
def test_bad_name_tags_are_refused(tag: str) -> None:
    with pytest.raises(ValueError, match="tag"):
        current_run().new_name(tag)


@pytest.mark.parametrize(
    "name", ["aj_short_db_1", "aj_abcdefghijk", "postgres", "xx_abcdefghij_db_1", "aj_ABCDEFGHIJ_x"]
)
def test_foreign_names_have_no_run_id(name: str) -> None:
    assert run_id_of(name) is None


def test_current_run_is_alive_and_a_finished_child_is_not() -> None:
    assert run_is_alive(current_run().run_id)
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sandboxes.runs import current_run; print(current_run().run_id)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    child_id = child.stdout.strip()
    # The child exited without finishing (atexit removes the record): either way it is dead.
    assert not run_is_alive(child_id)


def test_a_record_whose_pid_was_reused_is_dead() -> None:
    record = Run()
    path = record.record_path
    data = runs.RunRecord.model_validate_json(path.read_text())
    # Same pid (this live process) but another start time: the pid was reused.
    path.write_text(data.model_copy(update={"process_started": 1.0}).model_dump_json())
    assert not run_is_alive(record.run_id)
    record.finish()
    assert not path.exists()


def test_unknown_run_is_dead() -> None:
    assert not run_is_alive("zzzzzzzzzz")


async def test_collectors_run_in_order_and_a_failure_does_not_stop_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runs, "_collectors", {})
    calls: list[str] = []

    async def late() -> list[str]:
        calls.append("late")
        return ["late thing"]

    async def broken() -> list[str]:
        calls.append("broken")
        raise RuntimeError("engine gone")

    async def early() -> list[str]:
        calls.append("early")
        return []

    runs.register_collector("late", late, order=900)
    runs.register_collector("broken", broken, order=50)
    runs.register_collector("early", early, order=10)
    removed = await runs.collect_leftovers()
    assert calls == ["early", "broken", "late"]
    assert "late thing" in removed
    assert any("broken: collection failed: engine gone" in line for line in removed)


def test_the_workdir_follows_its_variable_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKDIR_ENV, str(tmp_path / "elsewhere"))
    assert workdir() == tmp_path / "elsewhere"
    assert workdir().is_dir()


def test_run_records_do_not_follow_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = runs.runs_registry()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(tmp_path)
    assert runs.runs_registry() == before == runs.RUNS_REGISTRY
    record = Run()
    try:
        assert record.record_path.parent == runs.RUNS_REGISTRY
    finally:
        record.finish()


def test_every_scratch_space_a_run_used_is_searched_by_collectors(tmp_path: Path) -> None:
    elsewhere = tmp_path / "another-workdir"
    child = subprocess.run(
        [sys.executable, "-c", "from sandboxes.runs import workdir; print(workdir())"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, WORKDIR_ENV: str(elsewhere)},
    )
    assert child.stdout.strip() == str(elsewhere)
    roots = runs.scratch_roots()
    assert roots[0] == workdir()  # this process's own first
    assert elsewhere in roots
    # A space that is gone is forgotten, and so is its note.
    elsewhere.rmdir()
    assert elsewhere not in runs.scratch_roots()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_note_of_a_scratch_space_is_ignored(tmp_path: Path) -> None:
    planted = tmp_path / "not-mine"
    planted.mkdir()
    note = runs.runs_registry() / runs.ROOTS_FOLDER / "planted-by-someone-else"
    note.write_text(str(planted))
    try:
        os.chown(note, os.getuid() + 4242, -1)
        assert planted not in runs.scratch_roots()
    finally:
        note.unlink()


def test_a_registry_that_is_a_symlink_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "somewhere"
    target.mkdir()
    link = tmp_path / "registry"
    link.symlink_to(target)
    monkeypatch.setattr(runs, "RUNS_REGISTRY", link)
    with pytest.raises(RuntimeError, match=f"{link} .*is not a folder"):
        runs.runs_registry()

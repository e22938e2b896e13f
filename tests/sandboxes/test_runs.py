"""Run identity, liveness and the ordering of leftover collectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
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


def test_a_start_moved_by_whole_seconds_is_a_stepped_clock_not_another_process() -> None:
    started = runs.process_start_time(os.getpid())
    assert started is not None
    # A wall-clock step moves every start time computed afterwards by whole seconds.
    for step in (1.0, -1.0, 7.0, -3600.0):
        assert runs.may_be_same_process(os.getpid(), started + step)
        assert not runs.is_same_process(
            os.getpid(), started + step
        )  # a signal needs the exact start
    # A start that differs by part of a second beyond that is another process's (a reused pid).
    for other in (1.5, -2.25, 3600.37):
        assert not runs.may_be_same_process(os.getpid(), started + other)
    assert not runs.may_be_same_process(os.getpid(), 1.0)  # older than any believable step


def _in_a_forked_child(check: Callable[[], str]) -> str:
    """Call ``check`` in a forked child that then ends the ordinary way (the exit hooks it
    inherited run); what it returned."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's coverage is not collected
        try:
            os.close(read)
            os.write(write, check().encode())
            runs.atexit._run_exitfuncs()  # type: ignore[attr-defined]
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        said = pipe.read()
    os.waitpid(child, 0)
    return said


def test_a_forked_child_neither_ends_its_parents_run_nor_names_things_after_it() -> None:
    parent = current_run()
    child_run = _in_a_forked_child(lambda: current_run().run_id)
    assert child_run not in ("", parent.run_id)
    assert parent.record_path.exists()  # the child's exit hooks left the parent's record alone
    assert run_is_alive(parent.run_id)
    assert not run_is_alive(child_run)  # the child's own run ended with it


def test_a_record_this_version_cannot_fully_read_keeps_its_run_alive() -> None:
    record = Run()
    try:
        data = json.loads(record.record_path.read_text())
        # A field a later version adds is ignored.
        record.record_path.write_text(json.dumps({**data, "added_later": 1}))
        assert run_is_alive(record.run_id)
        # A record in a format this version does not know is not taken for a dead run's.
        record.record_path.write_text(json.dumps({"format": 2}))
        assert run_is_alive(record.run_id)
    finally:
        record.finish()
    assert not run_is_alive(record.run_id)

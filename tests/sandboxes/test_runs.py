"""Run identity, liveness and the ordering of leftover collectors."""

from __future__ import annotations

import subprocess
import sys
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

"""``evaluate()``: the whole evaluation from Python, on the bundled mini dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.evaluate import (
    EARLIER_RUNS_NOTE,
    EvaluationError,
    EvaluationEvent,
    EvaluationOptions,
    JudgeRunFinished,
    JudgeRunsPlanned,
    JudgingFinished,
    JudgingStarted,
    ReplayFinished,
    ReplayPlanned,
    ReplayStarted,
    evaluate,
    no_model_note,
)
from bench.grid_runner import VERDICTS_FILE, GridSpec, read_records
from bench.results import BASELINES_FILE
from dataset.store import load_dataset
from storage.locks import LOCK_FILE, FolderBusyError

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


@pytest.fixture(scope="module")
def replay_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One replay folder for the module: the first evaluation replays, later ones resume."""
    return tmp_path_factory.mktemp("replay")


def _kinds(events: list[EvaluationEvent]) -> list[str]:
    """Event names in order, repeated names collapsed (replay and judge runs come many)."""
    names: list[str] = []
    for event in events:
        if not names or names[-1] != event.kind:
            names.append(event.kind)
    return names


def test_without_a_model_replay_baselines_and_report_run(
    tmp_path: Path, replay_folder: Path
) -> None:
    events: list[EvaluationEvent] = []
    options = EvaluationOptions(output=tmp_path, replay_output=replay_folder)
    result = evaluate(MINI, options, on_event=events.append)

    # The backends' start is announced (a first Docker run builds an image: minutes).
    assert [k for k in _kinds(events) if k != "trajectory-replayed"] == [
        "replay-started",
        "replay-planned",
        "phase-note",
        "replay-finished",
    ]
    planned_replays = next(e for e in events if isinstance(e, ReplayPlanned))
    assert planned_replays.new + planned_replays.reused == len(load_dataset(MINI).trajectories)
    started, finished = events[0], events[-1]
    assert isinstance(started, ReplayStarted)
    assert started.folder == replay_folder
    assert isinstance(finished, ReplayFinished)
    assert finished.summary == result.replay
    assert result.models == []
    assert result.judge is None
    assert not (tmp_path / VERDICTS_FILE).exists()
    labelled = [t for t in load_dataset(MINI).trajectories.values() if t.label is not None]
    # Seven baselines (cited-sources too: the search trajectories have claims), each on every
    # labelled trajectory, claim by claim where there are claims.
    assert result.baselines == 7 * sum(len(t.items) or 1 for t in labelled)
    assert len(result.baselines_file.read_text().splitlines()) == result.baselines
    assert result.baselines_file == tmp_path / BASELINES_FILE
    for path in (result.files.html, result.files.markdown, result.files.json_file):
        assert path.is_file()
        assert path.parent == tmp_path
    assert {c.config.kind for c in result.report.configs} == {"baseline"}
    assert no_model_note() in result.report.notes
    # The mini dataset has domains without a replay; the report says so.
    assert any("domains without a replay yet" in note for note in result.report.notes)
    assert result.problems == result.replay.problems == []
    # The results folder names its dataset for a later `agentjudge report`.
    assert json.loads((tmp_path / "summary.json").read_text())["dataset"] == str(MINI)


def test_a_scripted_grid_writes_verdicts_and_resumes_without_redoing(
    tmp_path: Path, replay_folder: Path
) -> None:
    options = EvaluationOptions(
        models=("mock/coin",),
        grid=GridSpec(modes=("agent", "llm"), turns=(1,)),
        output=tmp_path,
        replay_output=replay_folder,
        jobs=3,
    )
    # Claims are judged one per run, so "trajectories" counts the judged subjects.
    trajectories = sum(len(t.items) or 1 for t in load_dataset(MINI).trajectories.values())
    events: list[EvaluationEvent] = []
    result = evaluate(MINI, options, on_event=events.append)

    kinds = [k for k in _kinds(events) if k not in ("trajectory-replayed", "phase-note")]
    assert kinds == [
        "replay-started",
        "replay-planned",
        "replay-finished",
        "judging-started",
        "judge-runs-planned",
        "judge-run-finished",
        "judging-finished",
    ]
    starting = next(e for e in events if isinstance(e, JudgingStarted))
    assert starting.models == ["mock/coin"]
    planned = next(e for e in events if isinstance(e, JudgeRunsPlanned))
    assert (planned.new, planned.reused) == (2 * trajectories, 0)
    finished = [e.record.key for e in events if isinstance(e, JudgeRunFinished)]
    records = read_records(result.verdicts_file)
    assert sorted(finished) == sorted(records)
    assert len(records) == 2 * trajectories
    assert result.models == ["mock/coin"]
    assert result.judge is not None
    assert result.judge.runs == 2 * trajectories
    assert result.judge.resumed == 0
    done = next(e for e in events if isinstance(e, JudgingFinished))
    assert len(done.records) == 2 * trajectories
    judges = [c for c in result.report.configs if c.config.kind == "judge"]
    assert {c.label for c in judges} == {"agent T=1 mock/coin", "llm mock/coin"}
    assert no_model_note() not in result.report.notes

    lines = result.verdicts_file.read_text().splitlines()
    again: list[EvaluationEvent] = []
    second = evaluate(MINI, options, on_event=again.append)
    planned = next(e for e in again if isinstance(e, JudgeRunsPlanned))
    assert (planned.new, planned.reused) == (0, 2 * trajectories)
    assert not [e for e in again if isinstance(e, JudgeRunFinished)]
    assert second.judge is not None
    assert second.judge.resumed == 2 * trajectories
    assert second.replay.resumed == second.replay.total.trajectories
    assert result.verdicts_file.read_text().splitlines() == lines

    # Without a model, the folder's earlier judge rows stay in the report, and it says so.
    later = evaluate(MINI, EvaluationOptions(output=tmp_path, replay_output=replay_folder))
    assert later.judge is None
    assert {c.label for c in later.report.configs if c.config.kind == "judge"} == {
        c.label for c in judges
    }
    assert EARLIER_RUNS_NOTE in later.report.notes
    assert no_model_note() not in later.report.notes


def test_a_bad_model_stops_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    events: list[EvaluationEvent] = []
    for name in ("nosuchprovider/x", "anthropic/claude-x"):
        options = EvaluationOptions(
            models=(name,), output=tmp_path / "out", replay_output=tmp_path / "replay"
        )
        with pytest.raises(EvaluationError):
            evaluate(MINI, options, on_event=events.append)
    assert events == []
    assert not (tmp_path / "replay").exists()
    assert not (tmp_path / "out").exists()


def test_a_bad_grid_file_is_named_before_any_work(tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("turns: [0]\n")
    options = EvaluationOptions(
        models=("mock/pass",), grid_file=grid, replay_output=tmp_path / "replay"
    )
    with pytest.raises(EvaluationError, match=f"{grid}: turns.0"):
        evaluate(MINI, options)
    assert not (tmp_path / "replay").exists()


def test_a_missing_dataset_is_named_before_any_work(tmp_path: Path) -> None:
    events: list[EvaluationEvent] = []
    options = EvaluationOptions(
        models=("mock/pass",), output=tmp_path / "out", replay_output=tmp_path / "replay"
    )
    with pytest.raises(EvaluationError, match=f"{tmp_path / 'nowhere'}: no such dataset folder"):
        evaluate(tmp_path / "nowhere", options, on_event=events.append)
    assert events == []
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "replay").exists()


HOLD = """\
import sys, time
from pathlib import Path
from storage.locks import lock_folder
lock = lock_folder(Path(sys.argv[1]))
print("locked", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("held", ["out", "replay"])
def test_a_folder_another_process_writes_stops_the_evaluation_at_once(
    tmp_path: Path, held: str
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / held)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        events: list[EvaluationEvent] = []
        options = EvaluationOptions(
            models=("mock/pass",), output=tmp_path / "out", replay_output=tmp_path / "replay"
        )
        with pytest.raises(FolderBusyError, match=f"{tmp_path / held}: .*pid {holder.pid}"):
            evaluate(MINI, options, on_event=events.append)
    finally:
        holder.kill()
        holder.wait()
    # Nothing was replayed, judged or written by the refused evaluation.
    assert [event.kind for event in events] == (["replay-started"] if held == "replay" else [])
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [LOCK_FILE]
    assert not (tmp_path / "replay" / "fidelity.jsonl").exists()

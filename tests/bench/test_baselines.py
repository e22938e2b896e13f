"""Baseline judges: constant, seeded random, leave-one-task-out length threshold, self-report and
verifier, on the bundled DS suite."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench import baselines
from bench.baselines import BASELINES, baseline_predictions, fit_length_threshold
from bench.results import JudgeConfig, Prediction
from bench.scoring import config_order
from dataset.claims import claims_success
from dataset.models import Label, Trajectory
from dataset.store import Dataset, load_dataset
from replay.report import FidelityReport, VerifierCheck, VerifierRun

DS = Path(__file__).resolve().parents[2] / "datasets" / "ds"


@pytest.fixture(scope="module")
def suite() -> Dataset:
    return load_dataset(DS)


def _by(predictions: list[Prediction], name: str) -> dict[str, Prediction]:
    return {p.trajectory_id: p for p in predictions if p.config.name == name}


def test_threshold_fit_picks_the_most_accurate_rule() -> None:
    # Long runs pass: 3 and 4 steps FAIL, 7, 8, 9 PASS -> ">= 7" gets all five right.
    rule = fit_length_threshold([(3, False), (4, False), (7, True), (8, True), (9, True)])
    assert (rule.threshold, rule.longer_passes) == (7, True)
    # Short runs pass: "<= 4" is perfect, every ">=" rule misses at least two.
    rule = fit_length_threshold([(3, True), (4, True), (7, False), (8, False), (9, False)])
    assert (rule.threshold, rule.longer_passes) == (4, False)
    assert rule.predicts_pass(4)
    assert not rule.predicts_pass(5)


def test_threshold_fit_without_samples_passes_everything() -> None:
    rule = fit_length_threshold([])
    assert rule.predicts_pass(0)
    assert rule.predicts_pass(100)


def test_every_baseline_judges_every_labelled_trajectory(suite: Dataset) -> None:
    predictions = baseline_predictions(suite.trajectories, suite.tasks)
    counts = Counter(p.config.name for p in predictions)
    # no replay reports given; no claims in the DS suite
    assert set(counts) == set(BASELINES) - {"verifier", "cited-sources"}
    assert set(counts.values()) == {len(suite.trajectories)}
    for p in predictions:
        trajectory = suite.trajectories[p.trajectory_id]
        assert trajectory.label is not None
        assert p.label == trajectory.label.value
        assert p.task_id == trajectory.task_id
        assert p.agent == trajectory.agent
        assert p.config.kind == "baseline"
        assert p.config.label == f"baseline: {p.config.name}"
    assert {p.verdict for p in _by(predictions, "always-pass").values()} == {"PASS"}
    assert {p.verdict for p in _by(predictions, "always-fail").values()} == {"FAIL"}


def test_random_is_seeded_per_trajectory_not_per_run(suite: Dataset) -> None:
    everything = _by(baseline_predictions(suite.trajectories, suite.tasks), "random")
    half = dict(sorted(suite.trajectories.items())[::2])
    part = _by(baseline_predictions(half, suite.tasks), "random")
    assert all(part[t].verdict == everything[t].verdict for t in part)
    other_seed = _by(baseline_predictions(suite.trajectories, suite.tasks, seed=7), "random")
    assert any(other_seed[t].verdict != everything[t].verdict for t in everything)
    share = sum(p.verdict == "PASS" for p in everything.values()) / len(everything)
    assert 0.3 < share < 0.7


def test_self_report_believes_the_final_message(suite: Dataset) -> None:
    predictions = _by(baseline_predictions(suite.trajectories, suite.tasks), "self-report")
    for trajectory_id, prediction in predictions.items():
        claimed = claims_success(suite.trajectories[trajectory_id].final_response)
        assert prediction.verdict == ("PASS" if claimed else "FAIL")
    # The suite has wrong claims in both directions, so self-report is not always right.
    assert {p.correct for p in predictions.values()} == {True, False}


def _relabel(trajectory: Trajectory, value: str) -> Trajectory:
    return trajectory.model_copy(update={"label": Label(value=value, source="human")})


def test_length_threshold_never_sees_the_judged_tasks_labels(suite: Dataset) -> None:
    task = sorted(suite.tasks)[0]
    before = _by(baseline_predictions(suite.trajectories, suite.tasks), "length-threshold")
    flipped = {
        key: _relabel(t, "FAIL" if t.label and t.label.value == "PASS" else "PASS")
        if t.task_id == task
        else t
        for key, t in suite.trajectories.items()
    }
    after = _by(baseline_predictions(flipped, suite.tasks), "length-threshold")
    own = [key for key, t in suite.trajectories.items() if t.task_id == task]
    assert own
    assert all(after[key].verdict == before[key].verdict for key in own)
    assert all(f"fitted without task {task}" in (after[key].rationale or "") for key in own)
    # The rule for this task is the one fitted on every other task's trajectories.
    expected = fit_length_threshold(
        [
            (len(t.steps), t.label is not None and t.label.value == "PASS")
            for t in suite.trajectories.values()
            if t.task_id != task
        ]
    )
    for key in own:
        steps = len(suite.trajectories[key].steps)
        assert (before[key].verdict == "PASS") == expected.predicts_pass(steps)


def _report(trajectory: Trajectory, passed: bool | None) -> FidelityReport:
    verifier = None
    if passed is not None:
        run = VerifierRun(passed=passed, exit_code=0 if passed else 1, output="")
        verifier = VerifierCheck(
            recorded_label=None,
            recorded_output=None,
            replayed=run,
            agrees=None,
            explanation="test",
        )
    return FidelityReport(
        trajectory_id=trajectory.id,
        task_id=trajectory.task_id,
        domain="ds",
        subdomain="filesystem",
        backend="local",
        verdict="faithful" if passed is not None else "failed",
        verifier=verifier,
    )


def test_verifier_baseline_reads_the_replayed_verifier(suite: Dataset) -> None:
    ids = sorted(suite.trajectories)
    reports = {
        ids[0]: _report(suite.trajectories[ids[0]], True),
        ids[1]: _report(suite.trajectories[ids[1]], False),
        ids[2]: _report(suite.trajectories[ids[2]], None),
    }
    predictions = _by(baseline_predictions(suite.trajectories, suite.tasks, reports), "verifier")
    assert predictions[ids[0]].verdict == "PASS"
    assert predictions[ids[1]].verdict == "FAIL"
    assert predictions[ids[2]].verdict == "INVALID"
    assert "no verifier result" in (predictions[ids[2]].error or "")
    assert predictions[ids[3]].verdict == "INVALID"
    assert "no replay report" in (predictions[ids[3]].error or "")


def test_a_registered_baseline_is_predicted_and_ordered_after_the_built_in_ones(
    suite: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(baselines, "BASELINES", dict(BASELINES))

    @baselines.baseline("even-steps")
    def even_steps(inputs: baselines.BaselineInputs) -> baselines.BaselineRule:
        return lambda trajectory, task: (
            "PASS" if len(trajectory.steps) % 2 == 0 else "FAIL",
            f"{len(trajectory.steps)} steps",
        )

    assert baselines.baseline_names()[-1] == "even-steps"
    predictions = _by(baseline_predictions(suite.trajectories, suite.tasks), "even-steps")
    assert set(predictions) == set(suite.trajectories)
    for trajectory_id, prediction in predictions.items():
        steps = len(suite.trajectories[trajectory_id].steps)
        assert prediction.verdict == ("PASS" if steps % 2 == 0 else "FAIL")
        assert prediction.config.label == "baseline: even-steps"
    configs = [JudgeConfig(kind="baseline", name=name) for name in ("even-steps", "verifier")]
    assert [c.name for c in sorted(configs, key=config_order)] == ["verifier", "even-steps"]
    with pytest.raises(ValueError, match="already registered"):
        baselines.baseline("even-steps")(even_steps)


def test_a_baseline_that_cannot_run_is_left_out(
    suite: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(baselines, "BASELINES", {})

    @baselines.baseline("never")
    def never(inputs: baselines.BaselineInputs) -> baselines.BaselineRule | None:
        return None

    assert baseline_predictions(suite.trajectories, suite.tasks) == []

"""Judges without a model: the reference rows every report carries.

* ``always-pass`` / ``always-fail``: the constant answers (what F1 a judge must beat).
* ``random``: PASS with probability one half, seeded per trajectory id, so the answer does not
  depend on which other trajectories are in the run.
* ``length-threshold``: PASS when the step count is on the right side of a threshold. Threshold
  and side are fitted on the *other* tasks' trajectories (leave one task out), so a task's own
  labels never tune its prediction.
* ``self-report``: believes the agent: PASS when its final message claims success
  (``dataset.claims.claims_success``).
* ``verifier``: the task's own verifier run on the replayed final state: the rule-based upper
  bound. A trajectory without a verifier result (no verifier, replay failed) gets ``INVALID``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from bench.results import JudgeConfig, Prediction
from dataset.claims import claims_success
from dataset.models import Task, Trajectory
from judge_agent.verdict import VerdictValue
from replay.report import FidelityReport

__all__ = ["BASELINE_NAMES", "baseline_predictions", "fit_length_threshold"]

BASELINE_NAMES = (
    "always-pass",
    "always-fail",
    "random",
    "length-threshold",
    "self-report",
    "verifier",
)
"""Every baseline, in report order."""


@dataclass(frozen=True)
class LengthRule:
    """PASS when ``steps >= threshold`` (``longer_passes``) or ``steps <= threshold``."""

    threshold: int
    longer_passes: bool

    def predicts_pass(self, steps: int) -> bool:
        """The rule's answer for a trajectory of ``steps`` steps."""
        return steps >= self.threshold if self.longer_passes else steps <= self.threshold


def fit_length_threshold(samples: list[tuple[int, bool]]) -> LengthRule:
    """The threshold rule with the best accuracy on ``(steps, passed)`` samples.

    Candidates are every observed step count on both sides; ties go to the rule listed first
    (longer-passes before shorter-passes, then the smaller threshold), so the fit is
    deterministic. With no samples the rule passes everything.
    """
    if not samples:
        return LengthRule(0, longer_passes=True)
    best: tuple[int, LengthRule] | None = None
    for longer_passes in (True, False):
        for threshold in sorted({steps for steps, _ in samples}):
            rule = LengthRule(threshold, longer_passes)
            hits = sum(rule.predicts_pass(steps) == passed for steps, passed in samples)
            if best is None or hits > best[0]:
                best = (hits, rule)
    assert best is not None
    return best[1]


def _coin(seed: int, trajectory_id: str) -> bool:
    digest = hashlib.sha256(f"{seed}:{trajectory_id}".encode()).digest()
    return digest[0] < 128


def _verifier_answer(report: FidelityReport | None) -> tuple[VerdictValue, str]:
    if report is None:
        return "INVALID", "no replay report for this trajectory"
    if report.verifier is None:
        return "INVALID", f"no verifier result (replay {report.verdict})"
    replayed = report.verifier.replayed
    rationale = f"verify.py exit {replayed.exit_code}" + (
        " (timed out)" if replayed.timed_out else ""
    )
    return ("PASS" if replayed.passed else "FAIL"), rationale


def baseline_predictions(
    trajectories: Mapping[str, Trajectory],
    tasks: Mapping[str, Task],
    replay_reports: Mapping[str, FidelityReport] | None = None,
    *,
    seed: int = 0,
) -> list[Prediction]:
    """Every baseline's prediction on every labelled trajectory.

    ``replay_reports`` (by trajectory id) supply the verifier baseline; without them that
    baseline is left out rather than reported as all ``INVALID``.
    """
    labelled = sorted(
        (trajectory for trajectory in trajectories.values() if trajectory.label is not None),
        key=lambda trajectory: trajectory.id,
    )
    samples = {
        trajectory.id: (len(trajectory.steps), trajectory.label.value == "PASS")
        for trajectory in labelled
        if trajectory.label is not None
    }
    rules: dict[str, LengthRule] = {}
    predictions: list[Prediction] = []
    for trajectory in labelled:
        assert trajectory.label is not None
        task = tasks[trajectory.task_id]
        if task.id not in rules:
            training = [
                samples[other.id] for other in labelled if other.task_id != trajectory.task_id
            ]
            rules[task.id] = fit_length_threshold(training)
        rule = rules[task.id]
        steps = len(trajectory.steps)
        answers: dict[str, tuple[VerdictValue, str]] = {
            "always-pass": ("PASS", "always PASS"),
            "always-fail": ("FAIL", "always FAIL"),
            "random": (
                "PASS" if _coin(seed, trajectory.id) else "FAIL",
                f"coin seeded with {seed}",
            ),
            "length-threshold": (
                "PASS" if rule.predicts_pass(steps) else "FAIL",
                f"{steps} steps; PASS when {'>=' if rule.longer_passes else '<='} "
                f"{rule.threshold} (fitted without task {task.id})",
            ),
            "self-report": (
                ("PASS", "the final message claims success")
                if claims_success(trajectory.final_response)
                else ("FAIL", "the final message does not claim success")
            ),
        }
        if replay_reports is not None:
            answers["verifier"] = _verifier_answer(replay_reports.get(trajectory.id))
        for name in BASELINE_NAMES:
            if name not in answers:
                continue
            verdict, rationale = answers[name]
            predictions.append(
                Prediction(
                    config=JudgeConfig(kind="baseline", name=name),
                    trajectory_id=trajectory.id,
                    task_id=task.id,
                    domain=task.domain,
                    subdomain=task.subdomain,
                    agent=trajectory.agent,
                    label=trajectory.label.value,
                    verdict=verdict,
                    rationale=rationale,
                    error=rationale if verdict == "INVALID" else None,
                )
            )
    return predictions

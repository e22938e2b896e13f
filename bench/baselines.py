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
  bound. A trajectory without a verifier result (no verifier, replay failed) gets ``INVALID``;
  the row is left out when no task of the run has a verifier.
* ``cited-sources`` (only when some trajectory has single-item claims): PASS when the claim cites
  at least one source and the agent opened every source it cites (``dataset.urls``); a claim
  citing a page the agent never loaded is likely made up.

A trajectory with single-item claims (search answers) is answered claim by claim: each rule gets
the trajectory focused on one claim (``dataset.items.focus_on_item``) and its prediction carries
the claim's id and label; ``bench.item_scoring`` aggregates them as the report asks.

Each baseline is registered once with ``@baseline(name)``: a function that, given the run's
inputs (``BaselineInputs``), returns the per-trajectory rule, or None when it cannot run (the
verifier baseline without replay reports). ``baseline_predictions`` and the report's row order
iterate the registry, so a new baseline is one decorated function. Must not call models or
start environments: baselines read the recorded trajectories and the replay reports only.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from bench.results import JudgeConfig, Prediction
from dataset.claims import claims_success
from dataset.items import focus_on_item, focused_item, labelled_items
from dataset.models import Task, Trajectory
from dataset.urls import cited_urls, opened_urls
from judge_agent.verdict import VerdictValue
from replay.report import FidelityReport

__all__ = [
    "BASELINES",
    "Answer",
    "Baseline",
    "BaselineInputs",
    "BaselineRule",
    "RuleMaker",
    "baseline",
    "baseline_names",
    "baseline_predictions",
    "fit_length_threshold",
]

Answer = tuple[VerdictValue, str]
"""A baseline's verdict on one trajectory and why (the rationale shown in the report)."""

BaselineRule = Callable[[Trajectory, Task], Answer]
"""A baseline's answer for one labelled trajectory of a task."""


@dataclass(frozen=True)
class BaselineInputs:
    """What every baseline may look at in one run."""

    labelled: list[Trajectory]
    """Every labelled trajectory of the run, by id (those the baselines judge)."""
    tasks: Mapping[str, Task]
    """Their tasks by id."""
    replay_reports: Mapping[str, FidelityReport] | None
    """Fidelity reports (with the verifier's result) by trajectory id; None when the run has no
    replay."""
    seed: int
    """Seed of the randomised baselines."""


RuleMaker = Callable[[BaselineInputs], BaselineRule | None]
"""Builds a baseline's rule for one run, or returns None when the baseline cannot run on these
inputs (it is then left out rather than reported as all ``INVALID``)."""

RuleMakerT = TypeVar("RuleMakerT", bound=RuleMaker)


@dataclass(frozen=True)
class Baseline:
    """A registered baseline: its name (the report row ``baseline: NAME``) and its rule maker."""

    name: str
    """Unique name, e.g. ``always-pass``."""
    make_rule: RuleMaker
    """Builds the per-trajectory rule for a run (see ``RuleMaker``)."""


BASELINES: dict[str, Baseline] = {}
"""Every registered baseline, in registration order, which is the report's row order."""


def baseline(name: str) -> Callable[[RuleMakerT], RuleMakerT]:
    """Register the decorated rule maker as the baseline ``name`` (names must be unique)."""

    def register(make_rule: RuleMakerT) -> RuleMakerT:
        if name in BASELINES:
            raise ValueError(f"baseline {name!r} is already registered")
        BASELINES[name] = Baseline(name, make_rule)
        return make_rule

    return register


def baseline_names() -> tuple[str, ...]:
    """The registered baselines' names, in report order."""
    return tuple(BASELINES)


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


@baseline("always-pass")
def _always_pass(inputs: BaselineInputs) -> BaselineRule:
    """The constant PASS: what recall 1 costs in false positives."""
    return lambda trajectory, task: ("PASS", "always PASS")


@baseline("always-fail")
def _always_fail(inputs: BaselineInputs) -> BaselineRule:
    """The constant FAIL."""
    return lambda trajectory, task: ("FAIL", "always FAIL")


def _coin(seed: int, trajectory_id: str) -> bool:
    digest = hashlib.sha256(f"{seed}:{trajectory_id}".encode()).digest()
    return digest[0] < 128


def _subject(trajectory: Trajectory) -> str:
    """The trajectory id, with ``#<item id>`` for a copy focused on one claim."""
    item = focused_item(trajectory)
    return trajectory.id if item is None else f"{trajectory.id}#{item.id}"


@baseline("random")
def _random(inputs: BaselineInputs) -> BaselineRule:
    """PASS with probability one half, seeded per trajectory id (and claim id)."""
    seed = inputs.seed
    return lambda trajectory, task: (
        "PASS" if _coin(seed, _subject(trajectory)) else "FAIL",
        f"coin seeded with {seed}",
    )


@baseline("length-threshold")
def _length_threshold(inputs: BaselineInputs) -> BaselineRule:
    """A step-count threshold fitted on the other tasks' trajectories (leave one task out)."""
    samples = [
        (trajectory.task_id, len(trajectory.steps), trajectory.label.value == "PASS")
        for trajectory in inputs.labelled
        if trajectory.label is not None
    ]
    rules: dict[str, LengthRule] = {}

    def answer(trajectory: Trajectory, task: Task) -> Answer:
        if task.id not in rules:
            training = [(steps, passed) for owner, steps, passed in samples if owner != task.id]
            rules[task.id] = fit_length_threshold(training)
        rule = rules[task.id]
        steps = len(trajectory.steps)
        return (
            "PASS" if rule.predicts_pass(steps) else "FAIL",
            f"{steps} steps; PASS when {'>=' if rule.longer_passes else '<='} "
            f"{rule.threshold} (fitted without task {task.id})",
        )

    return answer


@baseline("self-report")
def _self_report(inputs: BaselineInputs) -> BaselineRule:
    """Believes the agent: PASS when its final message claims success."""
    return lambda trajectory, task: (
        ("PASS", "the final message claims success")
        if claims_success(trajectory.final_response)
        else ("FAIL", "the final message does not claim success")
    )


@baseline("verifier")
def _verifier(inputs: BaselineInputs) -> BaselineRule | None:
    """The task's verifier on the replayed final state; left out without replay reports, and
    when no judged trajectory's task has a verifier (a search dataset: nothing to run)."""
    reports = inputs.replay_reports
    if reports is None:
        return None
    if not any(inputs.tasks[t.task_id].verifier is not None for t in inputs.labelled):
        return None
    return lambda trajectory, task: _verifier_answer(reports.get(trajectory.id))


@baseline("cited-sources")
def _cited_sources(inputs: BaselineInputs) -> BaselineRule | None:
    """PASS when every cited source was opened by the agent; only for data with claims."""
    if not any(trajectory.items for trajectory in inputs.labelled):
        return None

    def answer(trajectory: Trajectory, task: Task) -> Answer:
        cited = cited_urls(trajectory)
        if not cited:
            return "FAIL", "cites no source"
        opened = set(opened_urls(trajectory))
        missing = [url for url in cited if url not in opened]
        if missing:
            return "FAIL", f"cites a page the agent never opened: {missing[0]}"
        return "PASS", f"the agent opened all {len(cited)} cited source(s)"

    return answer


def _verifier_answer(report: FidelityReport | None) -> Answer:
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
    """Every registered baseline's prediction on every labelled trajectory.

    ``replay_reports`` (by trajectory id) supply the verifier baseline; without them that
    baseline is left out rather than reported as all ``INVALID``.
    """
    labelled = sorted(
        (
            trajectory
            for trajectory in trajectories.values()
            if trajectory.label is not None or labelled_items(trajectory)
        ),
        key=lambda trajectory: trajectory.id,
    )
    inputs = BaselineInputs(labelled, tasks, replay_reports, seed)
    rules = [
        (name, rule)
        for name, registered in BASELINES.items()
        if (rule := registered.make_rule(inputs)) is not None
    ]
    predictions: list[Prediction] = []
    for whole in labelled:
        task = tasks[whole.task_id]
        subjects = [focus_on_item(whole, item.id) for item in labelled_items(whole)] or [whole]
        for trajectory, (name, rule) in itertools.product(subjects, rules):
            assert trajectory.label is not None
            item = focused_item(trajectory)
            verdict, rationale = rule(trajectory, task)
            predictions.append(
                Prediction(
                    config=JudgeConfig(kind="baseline", name=name),
                    trajectory_id=trajectory.id,
                    item_id=item.id if item is not None else None,
                    task_id=task.id,
                    domain=task.domain,
                    subdomain=task.subdomain,
                    agent=trajectory.agent,
                    label=trajectory.label.value,
                    label_source=trajectory.label.source,
                    verdict=verdict,
                    rationale=rationale,
                    error=rationale if verdict == "INVALID" else None,
                )
            )
    return predictions

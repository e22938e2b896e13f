"""Scoring single-item claims: per claim, or aggregated into one result per trajectory.

Search answers are judged claim by claim (``Prediction.item_id``). Two ways to score them:

* ``trajectory`` (AJ-Bench's): a trajectory's claim predictions of one configuration and run
  become one trajectory prediction. Its label is PASS when every claim is labelled PASS; its
  verdict is FAIL when the judge failed any claim, else INVALID when any claim got no verdict,
  else PASS. F1 is then computed over trajectories.
* ``item``: every claim is a prediction of its own; F1 is computed over claims.

Predictions on whole trajectories (no ``item_id``: every domain but search) pass through either
way, so a mixed dataset is scored consistently.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from bench.results import JudgeConfig, Prediction
from judge_agent.pricing import total_cost

__all__ = ["ITEM_SCORING_NOTES", "ItemScoring", "aggregate_items", "has_items"]

ItemScoring = Literal["trajectory", "item"]

ITEM_SCORING_NOTES: dict[ItemScoring, str] = {
    "trajectory": (
        "Claims were scored per trajectory (AJ-Bench's aggregation): a trajectory's claim "
        "verdicts became one verdict (FAIL if any claim was judged FAIL, INVALID if any got no "
        "verdict, else PASS) against one label (PASS when every claim is labelled PASS)."
    ),
    "item": (
        "Claims were scored per item: every single-item claim is one prediction, so counts, "
        "F1 and intervals are over claims (clustered by task)."
    ),
}
"""What the report says about the aggregation it used."""


def has_items(predictions: Sequence[Prediction]) -> bool:
    """Whether any prediction is about a single claim."""
    return any(prediction.item_id is not None for prediction in predictions)


def _merge(claims: list[Prediction]) -> Prediction:
    first = claims[0]
    labels = [claim.label for claim in claims]
    verdicts = [claim.verdict for claim in claims]
    verdict: Literal["PASS", "FAIL", "INVALID"] = "PASS"
    if "FAIL" in verdicts:
        verdict = "FAIL"
    elif "INVALID" in verdicts:
        verdict = "INVALID"
    stops = [claim.stop_reason for claim in claims if claim.stop_reason != "verdict"]
    errors = [f"{claim.item_id}: {claim.error}" for claim in claims if claim.error]
    return first.model_copy(
        update={
            "item_id": None,
            "label": "FAIL" if "FAIL" in labels else "PASS",
            "verdict": verdict,
            "scripted": any(claim.scripted for claim in claims),
            "cost_usd": total_cost(claim.cost_usd for claim in claims),
            "turns_used": sum(claim.turns_used for claim in claims),
            "tool_calls": sum(claim.tool_calls for claim in claims),
            "tool_errors": sum(claim.tool_errors for claim in claims),
            "stop_reason": stops[0] if stops else "verdict",
            "error": "; ".join(errors) if verdict == "INVALID" and errors else None,
            "rationale": "claims: "
            + ", ".join(f"{claim.item_id} {claim.verdict}" for claim in claims),
        }
    )


def aggregate_items(predictions: Sequence[Prediction], scoring: ItemScoring) -> list[Prediction]:
    """The predictions to score under ``scoring`` (see the module docstring); order kept, a
    trajectory's merged prediction standing where its first claim stood."""
    if scoring == "item":
        return list(predictions)
    groups: dict[tuple[JudgeConfig, str, int], list[Prediction]] = defaultdict(list)
    for prediction in predictions:
        if prediction.item_id is not None:
            groups[(prediction.config, prediction.trajectory_id, prediction.run)].append(prediction)
    merged: list[Prediction] = []
    for prediction in predictions:
        if prediction.item_id is None:
            merged.append(prediction)
            continue
        group = groups[(prediction.config, prediction.trajectory_id, prediction.run)]
        if group[0] is prediction:
            merged.append(_merge(group))
    return merged

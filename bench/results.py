"""What the bench scores: one prediction per (judge configuration, trajectory, run).

Judge records (``verdicts.jsonl``, written by ``bench.grid_runner``) and baseline judgements
(``baselines.jsonl``, written by ``bench.baselines``) both become ``Prediction`` rows keyed by a
``JudgeConfig``, so every metric, table and plot treats an LLM judge and a rule-based baseline the
same way.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bench.grid_runner import VERDICTS_FILE, JudgeRecord, read_records
from dataset.corrections import CorrectionKey, LabelCorrection, read_corrections
from dataset.models import LabelSource
from storage.jsonl import read_jsonl

__all__ = [
    "BASELINES_FILE",
    "JudgeConfig",
    "Prediction",
    "correct_labels",
    "predictions_from_records",
    "read_predictions",
]

BASELINES_FILE = "baselines.jsonl"
"""Baseline predictions, next to ``verdicts.jsonl`` in a judge output folder."""

ConfigKind = Literal["judge", "baseline"]


class JudgeConfig(BaseModel):
    """One row of the main table: a judge set-up whose runs are scored together."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: ConfigKind
    """``judge`` (an LLM judge) or ``baseline`` (a rule without a model)."""
    name: str
    """The judge mode (``agent``, ``llm``, ``react``) or the baseline's name
    (``always-pass``, ``always-fail``, ``random``, ``length-threshold``, ``self-report``,
    ``verifier``)."""
    turns: int = 0
    """The turn budget (0 when there is none: ``llm`` judges and baselines)."""
    model: str = ""
    """``provider/model`` of an LLM judge; empty for baselines."""
    variant: str = ""
    """Further ablation axes that are not the default, e.g. ``effort=high`` or
    ``screenshots=none``; empty when all are default."""

    @property
    def label(self) -> str:
        """A short human-readable name, unique within a report."""
        if self.kind == "baseline":
            return f"baseline: {self.name}"
        parts = [self.name]
        if self.turns:
            parts.append(f"T={self.turns}")
        parts.append(self.model)
        if self.variant:
            parts.append(self.variant)
        return " ".join(parts)

    @property
    def modality(self) -> str | None:
        """The observation modality in ``variant`` (``modality=...``), if any."""
        for part in self.variant.split():
            if part.startswith("modality="):
                return part.removeprefix("modality=")
        return None

    def without_modality(self) -> JudgeConfig:
        """The configuration with the modality taken out of its variant: what the modalities
        of one judge set-up share."""
        rest = " ".join(p for p in self.variant.split() if not p.startswith("modality="))
        return self.model_copy(update={"variant": rest})

    @property
    def family(self) -> str:
        """The configuration without its turn budget: one line of an F1-vs-turns curve."""
        return self.model_copy(update={"turns": 0}).label


class Prediction(BaseModel):
    """One verdict on one trajectory by one configuration (one run of it)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    config: JudgeConfig
    """Who judged."""
    trajectory_id: str
    """The trajectory judged."""
    item_id: str | None = None
    """The single claim of the trajectory this prediction is about (search answers are scored
    per claim); None for a prediction on the whole trajectory."""
    task_id: str
    """Its task: the unit the cluster bootstrap resamples."""
    domain: str
    """The task's domain."""
    subdomain: str
    """The task's subdomain."""
    agent: str | None = None
    """The agent that produced the trajectory (for ranking fidelity)."""
    run: int = 1
    """The repetition, from 1."""
    label: Literal["PASS", "FAIL"]
    """The ground truth."""
    label_source: LabelSource | None = None
    """Who decided the ground truth (``dataset.models.LabelSource``); None when the record
    predates it (counted as ``unknown``)."""
    verdict: Literal["PASS", "FAIL", "INVALID"]
    """The prediction; ``INVALID`` is scored as a wrong answer and counted on its own."""
    scripted: bool = False
    """Made by the scripted ``mock`` model: a pipeline dry run, not a judge result."""
    cost_usd: float | None = 0.0
    """Dollars spent (None when the model has no price)."""
    turns_used: int = 0
    """Model calls made."""
    tool_calls: int = 0
    """Tool calls made."""
    tool_errors: int = 0
    """Tool calls that returned an error."""
    stop_reason: str = "verdict"
    """What ended the judge run (``verdict``, ``turn_limit``, ``token_limit``, ``time_limit``,
    ``tool_call_limit``, ``error``)."""
    error: str | None = None
    """The error recorded with an ``INVALID`` verdict."""
    key: str | None = None
    """The judge run's key: its transcript is ``logs/<key>.jsonl``."""
    rationale: str | None = None
    """Why the verdict (a baseline's rule, or the judge's stated reasoning, shortened)."""

    @property
    def subject(self) -> str:
        """What was judged: the trajectory id, or ``<trajectory id>#<item id>`` for a claim."""
        return (
            self.trajectory_id if self.item_id is None else f"{self.trajectory_id}#{self.item_id}"
        )

    @property
    def correct(self) -> bool:
        """Whether the verdict equals the label (``INVALID`` never does)."""
        return self.verdict == self.label


def _claims_judged_together(record: JudgeRecord, prediction: Prediction) -> list[Prediction]:
    """One prediction per labelled claim of a run that judged all claims together. The run's
    cost, model calls and tool calls go to the first claim only, so totals stay right."""
    claims: list[Prediction] = []
    for position, (item_id, label) in enumerate(record.item_labels.items()):
        verdict = record.verdict.items.get(item_id, "INVALID")
        update: dict[str, object] = {"item_id": item_id, "label": label, "verdict": verdict}
        if verdict == "INVALID" and prediction.error is None:
            update["error"] = "no verdict for this claim"
        if position:
            update.update(cost_usd=0.0, turns_used=0, tool_calls=0, tool_errors=0)
        claims.append(prediction.model_copy(update=update))
    return claims


def predictions_from_records(records: list[JudgeRecord]) -> list[Prediction]:
    """Scorable predictions from judge records: one per labelled trajectory or claim judged
    alone, one per labelled claim of a run that judged claims together (unlabelled ones are left
    out)."""
    predictions: list[Prediction] = []
    for record in records:
        if record.label is None and not record.item_labels:
            continue
        verdict = record.verdict
        prediction = Prediction(
            config=JudgeConfig(
                kind="judge",
                name=record.mode,
                turns=record.turns,
                model=record.model,
                variant=record.variant,
            ),
            trajectory_id=record.trajectory_id,
            item_id=record.item_id,
            task_id=record.task_id,
            domain=record.domain,
            subdomain=record.subdomain,
            agent=record.agent,
            run=record.run,
            label=record.label or "FAIL",
            label_source=record.label_source,
            verdict=verdict.verdict,
            scripted=record.scripted,
            cost_usd=verdict.cost_usd,
            turns_used=verdict.turns_used,
            tool_calls=len(verdict.tool_calls),
            tool_errors=sum(call.is_error for call in verdict.tool_calls),
            stop_reason=verdict.stop_reason,
            error=verdict.error,
            key=record.key,
            rationale=(verdict.reasoning or "")[:300] or None,
        )
        if record.item_labels:
            predictions.extend(_claims_judged_together(record, prediction))
        else:
            predictions.append(prediction)
    return predictions


def correct_labels(
    predictions: list[Prediction], corrections: dict[CorrectionKey, LabelCorrection]
) -> list[Prediction]:
    """The predictions scored against the reviewed labels: each one whose trajectory (or claim)
    has a correction gets the corrected label."""
    if not corrections:
        return predictions
    corrected: list[Prediction] = []
    for prediction in predictions:
        correction = corrections.get((prediction.trajectory_id, prediction.item_id))
        if correction is None or correction.label == prediction.label:
            corrected.append(prediction)
        else:
            update = {"label": correction.label, "label_source": "human"}
            corrected.append(prediction.model_copy(update=update))
    return corrected


def with_label_sources(predictions: list[Prediction], sources: Collection[str]) -> list[Prediction]:
    """Only the predictions scored against a label from one of ``sources`` (a record without a
    label source counts as ``unknown``)."""
    wanted = set(sources)
    return [p for p in predictions if (p.label_source or "unknown") in wanted]


def read_predictions(folder: Path, label_corrections: Path | None = None) -> list[Prediction]:
    """Every prediction in a judge output folder: judge verdicts and baselines, scored against
    the labels of ``label_corrections`` (a ``dataset.corrections`` file) where it has one.
    Raises ``ValueError`` naming the file and line for a correction file that does not parse."""
    predictions = predictions_from_records(list(read_records(folder / VERDICTS_FILE).values()))
    predictions.extend(read_jsonl(folder / BASELINES_FILE, Prediction))
    if label_corrections is not None:
        predictions = correct_labels(predictions, read_corrections(label_corrections))
    return predictions

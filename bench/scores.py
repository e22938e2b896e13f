"""The scored bench report as data: what ``bench.scoring`` computes and ``bench.report`` renders.

Everything a report shows is in ``BenchReport`` (also written as ``report.json``), so the
Markdown page, the HTML page and tests read the same numbers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bench.results import JudgeConfig

__all__ = [
    "BenchReport",
    "ConfigScores",
    "Confusion",
    "CurvePoint",
    "GroupScores",
    "Improvement",
    "Interval",
    "PairedTest",
    "RankingFidelity",
    "RunSpread",
    "TurnCurve",
    "WrongVerdict",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Interval(_Model):
    """A 95% interval."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""


class RunSpread(_Model):
    """Avg@k: a metric computed on each run separately, then averaged over the k runs."""

    runs: int
    """k, the number of runs."""
    mean: float
    """Mean over runs."""
    std: float | None
    """Sample standard deviation over runs (None when k = 1)."""
    interval: Interval | None
    """95% Student-t interval of the mean (None when k = 1)."""


class Confusion(_Model):
    """Counts with PASS as the positive class. ``INVALID`` verdicts are scored as wrong: an
    invalid verdict on a PASS trajectory counts as a false negative, on a FAIL trajectory as a
    false positive, and both are also counted in ``invalid``."""

    tp: int = 0
    """PASS trajectories judged PASS."""
    fp: int = 0
    """FAIL trajectories judged PASS (or INVALID)."""
    tn: int = 0
    """FAIL trajectories judged FAIL."""
    fn: int = 0
    """PASS trajectories judged FAIL (or INVALID)."""
    invalid_on_pass: int = 0
    """INVALID verdicts on PASS trajectories (already inside ``fn``)."""
    invalid_on_fail: int = 0
    """INVALID verdicts on FAIL trajectories (already inside ``fp``)."""

    @property
    def invalid(self) -> int:
        """All INVALID verdicts."""
        return self.invalid_on_pass + self.invalid_on_fail

    @property
    def total(self) -> int:
        """Predictions counted."""
        return self.tp + self.fp + self.tn + self.fn


class GroupScores(_Model):
    """One configuration's scores on one group of trajectories (a subdomain, a domain or all),
    pooled over its runs."""

    group: str
    """The group's name: a subdomain, a domain, or ``overall``."""
    level: Literal["subdomain", "domain", "overall"]
    """Which kind of group."""
    predictions: int
    """Predictions scored (trajectories x runs)."""
    trajectories: int
    """Distinct trajectories."""
    confusion: Confusion
    """Pooled counts."""
    accuracy: float | None
    """(TP + TN) / all."""
    precision: float | None
    """TP / (TP + FP); None when nothing was judged PASS."""
    recall: float | None
    """TP / (TP + FN); None without PASS trajectories."""
    f1: float | None
    """Harmonic mean of precision and recall; 0 when both are 0; None when undefined."""
    balanced_accuracy: float | None
    """Mean of recall and specificity."""
    fpr: float | None
    """FP / (FP + TN): FAIL trajectories let through."""
    fnr: float | None
    """FN / (FN + TP): PASS trajectories rejected."""
    f1_interval: Interval | None = None
    """Task-cluster bootstrap interval of F1 (tasks resampled with all their trajectories)."""
    balanced_accuracy_interval: Interval | None = None
    """Task-cluster bootstrap interval of balanced accuracy."""
    f1_runs: RunSpread | None = None
    """F1 per run: Avg@k ± std with its t-interval."""
    accuracy_runs: RunSpread | None = None
    """Accuracy per run: Avg@k ± std with its t-interval."""


class RankingFidelity(_Model):
    """Does the judge rank the agents as the labels do?"""

    agents: list[str]
    """The agents compared (at least two with trajectories)."""
    label_rates: list[float]
    """Each agent's success rate by the labels."""
    judged_rates: list[float]
    """Each agent's success rate by the judge (share of PASS verdicts)."""
    spearman_rho: float | None
    """Spearman rank correlation of the two (None when either is constant)."""
    spearman_p: float | None
    """Its two-sided p-value."""
    mae: float
    """Mean absolute error of the judged rates."""


class ConfigScores(_Model):
    """Everything measured about one configuration."""

    config: JudgeConfig
    """The configuration."""
    label: str
    """``config.label``, for rendering."""
    scripted: bool = False
    """Its verdicts came from the scripted model: a dry run, not judge results."""
    groups: list[GroupScores]
    """Scores per subdomain, per domain and overall (``BenchReport.groups`` order)."""
    verdicts: int
    """Predictions made."""
    cost_per_verdict: float | None
    """Mean dollars per verdict (None when some cost is unknown)."""
    turns_per_verdict: float
    """Mean model calls per verdict."""
    tool_calls_per_verdict: float
    """Mean tool calls per verdict."""
    ranking: RankingFidelity | None = None
    """Ranking fidelity over agents (None with fewer than two agents)."""
    error_tags: dict[str, int] = Field(default_factory=dict)
    """Wrong verdicts per error tag."""
    incomplete: str | None = None
    """Why this configuration's scores do not compare with the others', when they do not: runs
    missing (``partial: 12 of 40 runs``) or mostly ``INVALID`` verdicts (``mostly INVALID: 30
    of 40``); None when complete. Every report shows it next to the label."""

    @property
    def shown_label(self) -> str:
        """The label with the incompleteness mark, as the reports show it."""
        return self.label + (f" [{self.incomplete}]" if self.incomplete else "")

    def group(self, name: str) -> GroupScores | None:
        """The scores of one group, if present."""
        return next((group for group in self.groups if group.group == name), None)


class PairedTest(_Model):
    """Agent vs LLM judge on the same trajectories and runs."""

    pairs: int
    """Paired predictions (same trajectory, same run)."""
    agent_only_correct: int
    """Pairs only the agent judge got right."""
    llm_only_correct: int
    """Pairs only the LLM judge got right."""
    mcnemar_p: float
    """Exact McNemar test (two-sided binomial on the discordant pairs)."""
    delta_f1: float | None
    """F1(agent) - F1(LLM) on the paired predictions."""
    delta_f1_interval: Interval | None
    """Paired task-cluster bootstrap interval of the F1 difference."""
    bootstrap_p: float | None
    """Two-sided paired bootstrap p-value of the F1 difference."""


class Improvement(_Model):
    """An "Improvement" row: an agent-mode configuration minus the LLM configuration of the same
    model and variant."""

    agent: JudgeConfig
    """The tool-using configuration."""
    llm: JudgeConfig
    """The trajectory-only configuration it is compared with."""
    label: str
    """How the row is named in tables."""
    delta_f1: dict[str, float | None]
    """F1 difference per group name."""
    paired: PairedTest
    """The paired test over all paired predictions."""


class ModalityComparison(_Model):
    """Two observation modalities of one judge set-up (same mode, turn budget, model and other
    axes), paired on the same trajectories and runs."""

    setup: JudgeConfig
    """The set-up, its variant without the modality."""
    first: str
    """The first modality (``screenshot``, ``a11y_tree``, ``screenshot_a11y_tree``)."""
    second: str
    """The modality it is compared with."""
    paired: PairedTest
    """The paired test: its ``agent_only_correct`` counts pairs only the first modality got
    right, ``llm_only_correct`` those only the second did, ``delta_f1`` is F1(first) -
    F1(second)."""


class CurvePoint(_Model):
    """F1 at one turn budget."""

    turns: int
    """The turn budget."""
    f1: float | None
    """Pooled overall F1."""
    interval: Interval | None
    """Its bootstrap interval."""


class TurnCurve(_Model):
    """F1 against turn budget for one family of configurations (same mode, model, variant)."""

    family: str
    """``JudgeConfig.family``."""
    points: list[CurvePoint]
    """By increasing budget."""
    incomplete: str | None = None
    """Set when a configuration of the family has runs missing or mostly ``INVALID`` verdicts
    (``ConfigScores.incomplete``), e.g. ``partial at T=4``; the plot's legend shows it."""


class WrongVerdict(_Model):
    """One verdict that disagreed with its label, for review."""

    config: str
    """The configuration's label."""
    trajectory_id: str
    """The trajectory."""
    run: int
    """The run."""
    label: str
    """The ground truth."""
    verdict: str
    """What the judge said."""
    tag: str
    """The automatic error tag (see ``bench.error_tags``)."""
    transcript: str | None
    """The run's transcript, relative to the report folder."""
    detail: str | None = None
    """The error or the start of the judge's reasoning."""


class BenchReport(_Model):
    """The whole scored report."""

    title: str
    """A heading."""
    dataset: str
    """The dataset folder judged."""
    generated_at: str
    """ISO timestamp."""
    groups: list[str]
    """Column order: subdomains, then domains, then ``overall``."""
    group_levels: dict[str, Literal["subdomain", "domain", "overall"]]
    """Each group's level."""
    label_counts: dict[str, dict[str, int]]
    """Per group, trajectories labelled PASS and FAIL."""
    configs: list[ConfigScores]
    """Judges first (sorted by mode, model, turns), then baselines."""
    improvements: list[Improvement] = Field(default_factory=list)
    """Agent - LLM rows."""
    curves: list[TurnCurve] = Field(default_factory=list)
    """F1 vs turn budget, one per judge family."""
    modality_comparisons: list[ModalityComparison] = Field(default_factory=list)
    """Paired tests between the observation modalities of each judge set-up run with more
    than one."""
    wrong_verdicts: list[WrongVerdict] = Field(default_factory=list)
    """Every wrong judge verdict (baselines excluded)."""
    error_tag_totals: dict[str, int] = Field(default_factory=dict)
    """Wrong judge verdicts per tag over all judge configurations."""
    notes: list[str] = Field(default_factory=list)
    """Plain statements about what is and is not in the report (no model configured, scripted
    verdicts, runs missing)."""
    bootstrap_replicates: int = 2000
    """Replicates behind every bootstrap interval."""
    item_scoring: Literal["trajectory", "item"] | None = None
    """How single-item claims were scored (``bench.item_scoring``): ``trajectory`` (claims
    aggregated into one result per trajectory, AJ-Bench's way) or ``item`` (each claim one
    prediction); None when no prediction was about a claim."""

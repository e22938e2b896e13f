"""From predictions to a ``BenchReport``: every number a report shows.

Scores are computed per configuration on each group (every subdomain, every domain, overall),
pooled over runs, with task-cluster bootstrap intervals (tasks resampled with all their
trajectories and runs, a fixed seed, so a report is reproducible) and Avg@k over runs. Agent and
react configurations are paired with the ``llm`` configuration of the same model and variant for
the "Improvement" rows and the paired tests.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from bench.baselines import baseline_names
from bench.error_tags import ERROR_TAGS, error_tag, mode_uses_tools
from bench.grid_runner import LOGS_DIR
from bench.item_scoring import ITEM_SCORING_NOTES, ItemScoring, aggregate_items, has_items
from bench.metrics import (
    METRICS_FROM_COUNTS,
    confusion_counts,
    counts_row,
    f1_from_counts,
    metric_values,
)
from bench.results import JudgeConfig, Prediction
from bench.scores import (
    BenchReport,
    ConfigScores,
    Confusion,
    CurvePoint,
    GroupScores,
    Improvement,
    ModalityComparison,
    PairedTest,
    RankingFidelity,
    RunSpread,
    TurnCurve,
    WrongVerdict,
)
from bench.statistics import (
    cluster_bootstrap,
    mcnemar_exact,
    mean_interval,
    paired_cluster_bootstrap,
    ranking_fidelity,
)
from judge_agent.modes import judge_mode, mode_names
from judge_agent.pricing import total_cost

__all__ = ["build_report", "config_order"]

Level = Literal["subdomain", "domain", "overall"]
T = TypeVar("T")

REFERENCE_MODE = "llm"
"""The tool-free mode that every tool-using mode is compared with (paired test, F1 deltas)."""


def _mode_order(mode: str) -> tuple[int, int]:
    """Modes with tools first, then those without, each in registration order (agent, react,
    llm); a mode no longer registered last."""
    names = mode_names()
    if mode not in names:
        return (2, 0)
    return (0 if judge_mode(mode).uses_tools else 1, names.index(mode))


def config_order(config: JudgeConfig) -> tuple[object, ...]:
    """Judges first (by model, variant, mode, budget), then baselines in their fixed order."""
    if config.kind == "baseline":
        names = baseline_names()
        position = names.index(config.name) if config.name in names else len(names)
        return (1, position, config.name)
    return (0, config.model, config.variant, _mode_order(config.name), config.turns)


def _groups(predictions: Iterable[Prediction]) -> dict[str, Level]:
    subdomains = sorted({p.subdomain for p in predictions})
    domains = sorted({p.domain for p in predictions})
    levels: dict[str, Level] = {}
    for name in subdomains:
        levels[name] = "subdomain"
    for name in domains:
        # A domain whose only subdomain shares its name adds nothing; keep the subdomain.
        levels.setdefault(name, "domain")
    levels["overall"] = "overall"
    return levels


def _members(prediction: Prediction, group: str, level: Level) -> bool:
    if level == "overall":
        return True
    return (prediction.subdomain if level == "subdomain" else prediction.domain) == group


def _confusion(predictions: Iterable[Prediction]) -> Confusion:
    """The predictions' confusion counts (INVALID scored as wrong, see ``bench.metrics``)."""
    labels: list[bool] = []
    verdicts: list[bool | None] = []
    for prediction in predictions:
        labels.append(prediction.label == "PASS")
        verdicts.append(None if prediction.verdict == "INVALID" else prediction.verdict == "PASS")
    return confusion_counts(labels, verdicts)


def _by(
    predictions: Iterable[Prediction], key: Callable[[Prediction], T]
) -> dict[T, list[Prediction]]:
    groups: dict[T, list[Prediction]] = defaultdict(list)
    for prediction in predictions:
        groups[key(prediction)].append(prediction)
    return groups


def _task_counts(predictions: Sequence[Prediction], tasks: list[str]) -> NDArray[np.int64]:
    """Per task (rows in ``tasks`` order): tp, fp, tn, fn over its predictions."""
    counts = np.zeros((len(tasks), 4), dtype=np.int64)
    by_task = _by(predictions, lambda prediction: prediction.task_id)
    for row, task in enumerate(tasks):
        counts[row] = counts_row(_confusion(by_task.get(task, [])))
    return counts


def _score_group(
    predictions: Sequence[Prediction], group: str, level: Level, replicates: int, seed: int
) -> GroupScores:
    confusion = _confusion(predictions)
    values = metric_values(confusion)
    tasks = sorted({p.task_id for p in predictions})
    counts = _task_counts(predictions, tasks)
    by_run = _by(predictions, lambda prediction: prediction.run)
    per_run = [metric_values(_confusion(run)) for _, run in sorted(by_run.items())]

    def spread(name: str) -> RunSpread | None:
        kept = [value for values in per_run if (value := values[name]) is not None]
        return mean_interval(kept) if kept else None

    return GroupScores(
        group=group,
        level=level,
        predictions=len(predictions),
        trajectories=len({p.subject for p in predictions}),
        confusion=confusion,
        accuracy=values["accuracy"],
        precision=values["precision"],
        recall=values["recall"],
        f1=values["f1"],
        balanced_accuracy=values["balanced_accuracy"],
        fpr=values["fpr"],
        fnr=values["fnr"],
        f1_interval=cluster_bootstrap(
            counts, METRICS_FROM_COUNTS["f1"], replicates=replicates, seed=seed
        ),
        balanced_accuracy_interval=cluster_bootstrap(
            counts, METRICS_FROM_COUNTS["balanced_accuracy"], replicates=replicates, seed=seed
        ),
        f1_runs=spread("f1"),
        accuracy_runs=spread("accuracy"),
    )


def _ranking(predictions: Sequence[Prediction]) -> RankingFidelity | None:
    labels: dict[str, dict[str, bool]] = defaultdict(dict)
    judged: dict[str, list[bool]] = defaultdict(list)
    for prediction in predictions:
        if prediction.agent is None:
            continue
        labels[prediction.agent][prediction.subject] = prediction.label == "PASS"
        judged[prediction.agent].append(prediction.verdict == "PASS")
    agents = sorted(labels)
    return ranking_fidelity(
        agents,
        [sum(labels[a].values()) / len(labels[a]) for a in agents],
        [sum(judged[a]) / len(judged[a]) for a in agents],
    )


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def _score_config(
    config: JudgeConfig,
    predictions: Sequence[Prediction],
    levels: dict[str, Level],
    replicates: int,
    seed: int,
) -> ConfigScores:
    groups = []
    for group, level in levels.items():
        members = [p for p in predictions if _members(p, group, level)]
        if members:
            groups.append(_score_group(members, group, level, replicates, seed))
    cost = total_cost(p.cost_usd for p in predictions)
    tags: dict[str, int] = {}
    for prediction in predictions:
        tag = error_tag(prediction)
        if tag is not None:
            tags[tag] = tags.get(tag, 0) + 1
    return ConfigScores(
        config=config,
        label=config.label,
        scripted=any(p.scripted for p in predictions),
        groups=groups,
        verdicts=len(predictions),
        cost_per_verdict=None if cost is None or not predictions else cost / len(predictions),
        turns_per_verdict=_mean([float(p.turns_used) for p in predictions]),
        tool_calls_per_verdict=_mean([float(p.tool_calls) for p in predictions]),
        ranking=_ranking(predictions),
        error_tags={tag: tags[tag] for tag in ERROR_TAGS if tag in tags},
    )


MOSTLY_INVALID = 0.5
"""A configuration with more than this share of ``INVALID`` verdicts is marked in the reports."""


def incompleteness(predictions: Sequence[Prediction], subjects: int) -> str | None:
    """Why a judge configuration's scores do not compare with the others' (``ConfigScores.
    incomplete``): fewer predictions than ``subjects`` times its repetitions (runs missing), or
    mostly ``INVALID`` verdicts; None when neither."""
    if not predictions:
        return None
    expected = subjects * max(p.run for p in predictions)
    if len(predictions) < expected:
        return f"partial: {len(predictions)} of {expected} runs"
    invalid = sum(p.verdict == "INVALID" for p in predictions)
    if invalid > MOSTLY_INVALID * len(predictions):
        return f"mostly INVALID: {invalid} of {len(predictions)}"
    return None


def _paired(
    agent: Sequence[Prediction], llm: Sequence[Prediction], replicates: int, seed: int
) -> tuple[PairedTest, list[tuple[Prediction, Prediction]]]:
    llm_by_key = {(p.subject, p.run): p for p in llm}
    pairs = [(a, llm_by_key[(a.subject, a.run)]) for a in agent if (a.subject, a.run) in llm_by_key]
    agent_only = sum(a.correct and not b.correct for a, b in pairs)
    llm_only = sum(b.correct and not a.correct for a, b in pairs)
    tasks = sorted({a.task_id for a, _ in pairs})
    counts_a = _task_counts([a for a, _ in pairs], tasks)
    counts_b = _task_counts([b for _, b in pairs], tasks)
    delta: float | None = None
    interval = None
    p_value = None
    if pairs:
        f1_a = f1_from_counts(counts_a.sum(axis=0))
        f1_b = f1_from_counts(counts_b.sum(axis=0))
        if not (np.isnan(f1_a) or np.isnan(f1_b)):
            delta = float(f1_a - f1_b)
        interval, p_value = paired_cluster_bootstrap(
            counts_a, counts_b, METRICS_FROM_COUNTS["f1"], replicates=replicates, seed=seed
        )
    test = PairedTest(
        pairs=len(pairs),
        agent_only_correct=agent_only,
        llm_only_correct=llm_only,
        mcnemar_p=mcnemar_exact(agent_only, llm_only),
        delta_f1=delta,
        delta_f1_interval=interval,
        bootstrap_p=p_value,
    )
    return test, pairs


def _improvements(
    by_config: dict[JudgeConfig, list[Prediction]],
    scores: dict[JudgeConfig, ConfigScores],
    replicates: int,
    seed: int,
) -> list[Improvement]:
    rows: list[Improvement] = []
    judges = sorted((c for c in by_config if c.kind == "judge"), key=config_order)
    for config in judges:
        if config.name == REFERENCE_MODE or not mode_uses_tools(config.name):
            continue
        llm = JudgeConfig(
            kind="judge", name=REFERENCE_MODE, model=config.model, variant=config.variant
        )
        if llm not in by_config:
            continue
        test, _ = _paired(by_config[config], by_config[llm], replicates, seed)
        deltas: dict[str, float | None] = {}
        for group in scores[config].groups:
            other = scores[llm].group(group.group)
            deltas[group.group] = (
                None
                if other is None or group.f1 is None or other.f1 is None
                else group.f1 - other.f1
            )
        rows.append(
            Improvement(
                agent=config,
                llm=llm,
                label=f"Improvement ({config.label} - llm)",
                delta_f1=deltas,
                paired=test,
            )
        )
    return rows


MODALITY_ORDER = ("screenshot", "a11y_tree", "screenshot_a11y_tree")
"""The order modalities are paired in (first against each later one)."""


def _modality_rank(modality: str) -> tuple[int, str]:
    known = modality in MODALITY_ORDER
    return (MODALITY_ORDER.index(modality) if known else len(MODALITY_ORDER), modality)


def _modality_comparisons(
    by_config: dict[JudgeConfig, list[Prediction]], replicates: int, seed: int
) -> list[ModalityComparison]:
    setups: dict[JudgeConfig, dict[str, JudgeConfig]] = defaultdict(dict)
    for config in by_config:
        if config.kind == "judge" and config.modality is not None:
            setups[config.without_modality()][config.modality] = config
    rows: list[ModalityComparison] = []
    for setup in sorted(setups, key=config_order):
        modalities = sorted(setups[setup], key=_modality_rank)
        for index, first in enumerate(modalities):
            for second in modalities[index + 1 :]:
                test, _ = _paired(
                    by_config[setups[setup][first]],
                    by_config[setups[setup][second]],
                    replicates,
                    seed,
                )
                rows.append(
                    ModalityComparison(setup=setup, first=first, second=second, paired=test)
                )
    return rows


def _curves(scores: dict[JudgeConfig, ConfigScores]) -> list[TurnCurve]:
    families: dict[str, list[CurvePoint]] = defaultdict(list)
    marks: dict[str, list[str]] = defaultdict(list)
    for config, score in scores.items():
        if config.kind != "judge" or config.turns == 0:
            continue
        if score.incomplete:
            marks[config.family].append(f"T={config.turns}")
        overall = score.group("overall")
        families[config.family].append(
            CurvePoint(
                turns=config.turns,
                f1=overall.f1 if overall else None,
                interval=overall.f1_interval if overall else None,
            )
        )
    return [
        TurnCurve(
            family=family,
            points=sorted(points, key=lambda point: point.turns),
            incomplete=f"incomplete at {', '.join(marks[family])}" if marks[family] else None,
        )
        for family, points in sorted(families.items())
    ]


def _wrong_verdicts(predictions: Iterable[Prediction]) -> list[WrongVerdict]:
    wrong: list[WrongVerdict] = []
    for prediction in predictions:
        tag = error_tag(prediction)
        if tag is None:
            continue
        wrong.append(
            WrongVerdict(
                config=prediction.config.label,
                trajectory_id=prediction.subject,
                run=prediction.run,
                label=prediction.label,
                verdict=prediction.verdict,
                tag=tag,
                transcript=f"{LOGS_DIR}/{prediction.key}.jsonl" if prediction.key else None,
                detail=prediction.error or prediction.rationale,
            )
        )
    return sorted(wrong, key=lambda item: (item.config, item.trajectory_id, item.run))


def build_report(
    predictions: Sequence[Prediction],
    *,
    dataset: str,
    title: str = "Judge evaluation",
    notes: Sequence[str] = (),
    replicates: int = 2000,
    seed: int = 0,
    item_scoring: ItemScoring = "trajectory",
) -> BenchReport:
    """Score every configuration in ``predictions`` and assemble the report. Predictions on
    single claims are scored as ``item_scoring`` says (``bench.item_scoring``)."""
    with_items = has_items(predictions)
    predictions = aggregate_items(predictions, item_scoring)
    levels = _groups(predictions)
    by_config = _by(predictions, lambda prediction: prediction.config)
    ordered = sorted(by_config, key=config_order)
    scores = {
        config: _score_config(config, by_config[config], levels, replicates, seed)
        for config in ordered
    }
    subjects = len({prediction.subject for prediction in predictions})
    flagged: list[str] = []
    for config, score in scores.items():
        if config.kind == "judge":
            score.incomplete = incompleteness(by_config[config], subjects)
            if score.incomplete:
                flagged.append(score.shown_label)
    labels: dict[str, str] = {}
    where: dict[str, Prediction] = {}
    for prediction in predictions:
        labels[prediction.subject] = prediction.label
        where[prediction.subject] = prediction
    label_counts: dict[str, dict[str, int]] = {}
    for group, level in levels.items():
        members = [t for t, p in where.items() if _members(p, group, level)]
        label_counts[group] = {
            value: sum(labels[t] == value for t in members) for value in ("PASS", "FAIL")
        }
    judged = [p for p in predictions if p.config.kind == "judge"]
    wrong = _wrong_verdicts(judged)
    totals: dict[str, int] = {}
    for item in wrong:
        totals[item.tag] = totals.get(item.tag, 0) + 1
    all_notes = list(notes)
    if with_items:
        all_notes.append(ITEM_SCORING_NOTES[item_scoring])
    scripted = sorted({p.config.model for p in judged if p.scripted})
    if scripted:
        all_notes.append(
            f"The rows of {', '.join(scripted)} come from the scripted mock model: they exercise "
            "the pipeline and are not judge results."
        )
    if flagged:
        all_notes.append(
            "Not comparable with the other rows (runs missing, or mostly INVALID verdicts, which "
            "count as wrong): " + "; ".join(flagged) + ". Resume the judge run (INVALID ones "
            "with --retry-invalid) to complete them."
        )
    return BenchReport(
        title=title,
        dataset=dataset,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        groups=list(levels),
        group_levels=levels,
        label_counts=label_counts,
        configs=list(scores.values()),
        improvements=_improvements(by_config, scores, replicates, seed),
        curves=_curves(scores),
        modality_comparisons=_modality_comparisons(by_config, replicates, seed),
        wrong_verdicts=wrong,
        error_tag_totals={tag: totals[tag] for tag in ERROR_TAGS if tag in totals},
        notes=all_notes,
        bootstrap_replicates=replicates,
        item_scoring=item_scoring if with_items else None,
    )

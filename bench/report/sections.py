"""The sections of a bench report, as blocks, in the order the pages show them.

Owns what each section says: the title and notes, label counts, the main table, detailed
metrics, paired tests, ranking fidelity, plots, error tags and wrong verdicts. Every number is
read from the ``BenchReport``, never computed here; how a block looks in Markdown or HTML is
``bench.report.blocks``.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from bench.error_tags import ERROR_TAGS
from bench.plots import turn_plot
from bench.report.blocks import (
    DASH,
    Block,
    Callout,
    Cell,
    Heading,
    Link,
    Para,
    Plot,
    Table,
    Terms,
    format_cost,
    format_interval,
    format_number,
    format_p_value,
    format_signed,
    format_spread,
    shorten,
)
from bench.scores import BenchReport, ConfigScores, GroupScores, PairedTest, WrongVerdict

WRONG_VERDICT_LIMIT = 500
"""Wrong verdicts listed at most; a sentence says how many more there are."""

_MINUS = "\u2212"
_RHO = "\u03c1"


def _judges(report: BenchReport) -> list[ConfigScores]:
    return [config for config in report.configs if config.config.kind == "judge"]


def _baselines(report: BenchReport) -> list[ConfigScores]:
    return [config for config in report.configs if config.config.kind == "baseline"]


def title_and_notes(report: BenchReport) -> list[Block]:
    """Title, dataset and generation line, and the notes (scripted models named)."""
    blocks: list[Block] = [
        Heading(report.title, 1, "title"),
        Para(
            f"Dataset: {report.dataset} · Generated: {report.generated_at} · "
            f"Bootstrap replicates: {report.bootstrap_replicates}"
            + (f" · Claims scored per {report.item_scoring}" if report.item_scoring else ""),
            "meta",
        ),
    ]
    notes = list(report.notes)
    for config in report.configs:
        named = config.config.model or config.label
        if config.scripted and not any(named in note for note in notes):
            notes.append(f"{config.label}: scripted model, a dry run, not judge results.")
    if notes:
        blocks.append(Callout("Notes", notes))
    return blocks


def label_counts(report: BenchReport) -> list[Block]:
    """PASS and FAIL labels per group."""
    blocks: list[Block] = [Heading("Label counts", 2, "sec-label-counts")]
    names = list(report.groups) + [g for g in report.label_counts if g not in report.groups]
    if not names:
        return [*blocks, Para("No labelled trajectories: the report has no groups.")]
    rows: list[list[Cell]] = []
    for name in names:
        counts = report.label_counts.get(name, {})
        passed, failed = counts.get("PASS", 0), counts.get("FAIL", 0)
        level = report.group_levels.get(name, "")
        rows.append([name, level, str(passed), str(failed), str(passed + failed)])
    header = ["Group", "Level", "PASS", "FAIL", "Total"]
    return [*blocks, Table("label-counts", header, rows)]


def main_table(report: BenchReport) -> list[Block]:
    """F1 by group for every configuration, with the Improvement rows."""
    blocks: list[Block] = [
        Heading("Main table: F1 by group", 2, "sec-main-table"),
        Para(
            "Each cell is F1 (PASS is the positive class) on the group's trajectories, pooled "
            "over runs, with its 95% task-cluster bootstrap interval. Improvement rows give "
            f"F1(agent) {_MINUS} F1(LLM) for the same model."
        ),
    ]
    if not report.configs:
        return [*blocks, Para("No configurations were scored, so there is nothing to show.")]

    def row(config: ConfigScores) -> list[Cell]:
        cells: list[Cell] = [config.shown_label]
        for name in report.groups:
            group = config.group(name)
            cells.append(DASH if group is None else format_interval(group.f1, group.f1_interval))
        return cells

    rows = [row(config) for config in _judges(report)]
    first_improvement = len(rows)
    for improvement in report.improvements:
        deltas = [format_signed(improvement.delta_f1.get(name)) for name in report.groups]
        rows.append([improvement.label, *deltas])
    emphasis = frozenset(range(first_improvement, len(rows)))
    rows.extend(row(config) for config in _baselines(report))
    header = ["Configuration", *report.groups]
    blocks.append(Table("main-table", header, rows, emphasis=emphasis))
    if not report.improvements:
        blocks.append(
            Para("No Improvement rows: no agent-mode configuration has an LLM counterpart.")
        )
    return blocks


def _detailed_row(config: ConfigScores) -> list[Cell]:
    overall: GroupScores | None = config.group("overall")
    tail: list[Cell] = [
        str(config.verdicts),
        format_cost(config.cost_per_verdict),
        f"{config.turns_per_verdict:.2f}",
        f"{config.tool_calls_per_verdict:.2f}",
    ]
    if overall is None:
        return [config.shown_label, *[DASH] * 9, *tail]
    return [
        config.shown_label,
        format_number(overall.accuracy),
        format_number(overall.precision),
        format_number(overall.recall),
        format_interval(overall.f1, overall.f1_interval),
        format_interval(overall.balanced_accuracy, overall.balanced_accuracy_interval),
        format_number(overall.fpr),
        format_number(overall.fnr),
        str(overall.confusion.invalid),
        format_spread(overall.f1_runs),
        *tail,
    ]


def detailed_metrics(report: BenchReport) -> list[Block]:
    """Every overall metric, cost and effort per configuration."""
    blocks: list[Block] = [
        Heading("Detailed metrics (overall)", 2, "sec-detailed-metrics"),
        Para(
            "All trajectories, pooled over runs. INVALID verdicts count as wrong. Avg@k F1 is "
            "F1 computed per run, then averaged: mean ± std [95% t-interval]."
        ),
    ]
    if not report.configs:
        return [*blocks, Para("No configurations were scored.")]
    header = [
        "Configuration",
        "Accuracy",
        "Precision",
        "Recall",
        "F1 [95% CI]",
        "Balanced acc. [95% CI]",
        "FPR",
        "FNR",
        "Invalid",
        "Avg@k F1",
        "Verdicts",
        "Cost / verdict",
        "Turns / verdict",
        "Tool calls / verdict",
    ]
    rows = [_detailed_row(config) for config in report.configs]
    return [*blocks, Table("detailed-metrics", header, rows)]


def _paired_cells(paired: PairedTest) -> list[Cell]:
    """A paired test's columns: pairs, each side's only-correct counts, McNemar p, ΔF1 with its
    interval, bootstrap p."""
    return [
        str(paired.pairs),
        str(paired.agent_only_correct),
        str(paired.llm_only_correct),
        format_p_value(paired.mcnemar_p),
        format_interval(paired.delta_f1, paired.delta_f1_interval, signed=True),
        format_p_value(paired.bootstrap_p),
    ]


def paired_tests(report: BenchReport) -> list[Block]:
    """McNemar and the paired bootstrap of each agent-vs-LLM comparison."""
    blocks: list[Block] = [
        Heading("Agent vs LLM paired tests", 2, "sec-paired-tests"),
    ]
    if not report.improvements:
        return [
            *blocks,
            Para(
                "No paired tests: the report has no agent-mode configuration with an LLM "
                "configuration of the same model and variant to compare it with."
            ),
        ]
    blocks.append(
        Para(
            "Same trajectories, same runs. McNemar: exact test on the pairs only one judge got "
            f"right. ΔF1: F1(agent) {_MINUS} F1(LLM) with its paired task-cluster bootstrap "
            "interval."
        )
    )
    rows: list[list[Cell]] = []
    for improvement in report.improvements:
        paired = improvement.paired
        rows.append(
            [
                improvement.label,
                *_paired_cells(paired),
            ]
        )
    header = [
        "Comparison",
        "Pairs",
        "Agent-only correct",
        "LLM-only correct",
        "McNemar p",
        "ΔF1 [95% CI]",
        "Bootstrap p",
    ]
    return [*blocks, Table("paired-tests", header, rows)]


MODALITY_COLUMNS = ("screenshot", "a11y_tree", "screenshot_a11y_tree")
"""The modality columns, in order (others a judge was run with follow)."""


def modalities(report: BenchReport) -> list[Block]:
    """F1 per observation modality of each judge set-up, and the paired tests between them;
    nothing when no configuration names a modality."""
    by_setup: dict[str, dict[str, ConfigScores]] = {}
    for config in _judges(report):
        modality = config.config.modality
        if modality is not None:
            by_setup.setdefault(config.config.without_modality().label, {})[modality] = config
    if not by_setup:
        return []
    seen = {m for configs in by_setup.values() for m in configs}
    columns = [m for m in MODALITY_COLUMNS if m in seen] + sorted(seen - set(MODALITY_COLUMNS))
    blocks: list[Block] = [
        Heading("Observation modalities", 2, "sec-modalities"),
        Para(
            "Overall F1 of each judge set-up (mode, turn budget, model, other axes) under each "
            "observation modality: what the GUI tools answer with for agent and react judges, "
            "what the rendered trajectory holds for llm judges."
        ),
    ]
    rows: list[list[Cell]] = []
    for setup, configs in by_setup.items():
        cells: list[Cell] = [setup]
        for modality in columns:
            scores = configs.get(modality)
            overall = scores.group("overall") if scores is not None else None
            cells.append(
                DASH if overall is None else format_interval(overall.f1, overall.f1_interval)
            )
        rows.append(cells)
    blocks.append(Table("modalities", ["Set-up", *columns], rows))
    if report.modality_comparisons:
        blocks.append(
            Para(
                "Paired on the same trajectories and runs. McNemar: exact test on the pairs "
                f"only one modality got right. ΔF1: F1(first) {_MINUS} F1(second) with its "
                "paired task-cluster bootstrap interval."
            )
        )
        tests: list[list[Cell]] = []
        for comparison in report.modality_comparisons:
            paired = comparison.paired
            tests.append(
                [
                    comparison.setup.label,
                    f"{comparison.first} vs {comparison.second}",
                    *_paired_cells(paired),
                ]
            )
        header = [
            "Set-up",
            "Comparison",
            "Pairs",
            "First-only correct",
            "Second-only correct",
            "McNemar p",
            "ΔF1 [95% CI]",
            "Bootstrap p",
        ]
        blocks.append(Table("modality-tests", header, tests))
    return blocks


def ranking(report: BenchReport) -> list[Block]:
    """Whether each configuration ranks the agents as the labels do."""
    blocks: list[Block] = [Heading("Ranking fidelity", 2, "sec-ranking")]
    ranked = [config for config in report.configs if config.ranking is not None]
    if not ranked:
        return [
            *blocks,
            Para(
                "No ranking fidelity: it needs trajectories from at least two agents, and no "
                "configuration has them."
            ),
        ]
    blocks.append(
        Para(
            f"Does the judge rank the agents as the labels do? Spearman {_RHO} between each "
            "agent's success rate by the labels and by the judge "
            f"({DASH} when either is constant); MAE of "
            "the judged rates. Rates are shown as label → judged."
        )
    )
    rows: list[list[Cell]] = []
    for config in ranked:
        ranks = config.ranking
        assert ranks is not None
        rho = format_number(ranks.spearman_rho)
        if ranks.spearman_p is not None:
            rho += f" (p={format_p_value(ranks.spearman_p)})"
        rates = "; ".join(
            f"{agent} {label:.2f} → {judged:.2f}"
            for agent, label, judged in zip(
                ranks.agents, ranks.label_rates, ranks.judged_rates, strict=False
            )
        )
        rows.append([config.label, str(len(ranks.agents)), rho, f"{ranks.mae:.3f}", rates])
    header = ["Configuration", "Agents", f"Spearman {_RHO} (p)", "MAE", "Success rate per agent"]
    return [*blocks, Table("ranking", header, rows)]


def plots(report: BenchReport) -> list[Block]:
    """The three figures, each with a text alternative saying what it shows."""
    drawn = turn_plot(report)
    families = [curve.family for curve in drawn.curves]
    if families:
        curves = f"{len(families)} judge famil{'y' if len(families) == 1 else 'ies'} "
        curves += f"({', '.join(families)})"
    else:
        curves = "no judge families (no turn-budget curves)"
    flat = [level.label for level in drawn.flat_judges]
    flat_text = (
        f"{len(flat)} judge(s) without a turn budget ({', '.join(flat)}) as dash-dotted "
        "horizontal lines with their interval as a band, "
        if flat
        else ""
    )
    turns_alt = (
        f"Line chart of overall F1 (0 to 1) against turn budget on a log2 axis for {curves}, "
        f"with {flat_text}{len(drawn.baselines)} baseline(s) as dashed grey horizontal lines."
    )
    labels = ", ".join(config.label for config in report.configs) or "none"
    confusion_alt = (
        f"Confusion matrices on all trajectories, label PASS/FAIL against verdict "
        f"PASS/FAIL/INVALID, one per configuration: {labels}."
    )
    cost_alt = (
        "Scatter plot of overall F1 with its interval against cost per verdict in dollars, "
        f"one labelled point per configuration: {labels}."
    )
    return [
        Heading("Plots", 2, "sec-plots"),
        Heading("F1 vs turn budget", 3, "sec-plot-f1-vs-turns"),
        Plot("plot-f1-vs-turns", "f1-vs-turns", turns_alt),
        Heading("Confusion matrices", 3, "sec-plot-confusion"),
        Plot("plot-confusion", "confusion", confusion_alt),
        Heading("Cost vs F1", 3, "sec-plot-cost-vs-f1"),
        Plot("plot-cost-vs-f1", "cost-vs-f1", cost_alt),
    ]


def _tag_order(report: BenchReport) -> list[str]:
    seen = set(report.error_tag_totals)
    for config in report.configs:
        seen.update(config.error_tags)
    known = [tag for tag in ERROR_TAGS if tag in seen]
    return known + sorted(seen - set(ERROR_TAGS))


def error_tags(report: BenchReport) -> list[Block]:
    """What each error tag means, and how many wrong judge verdicts got each."""
    blocks: list[Block] = [
        Heading("Error tags", 2, "sec-error-tags"),
        Para("Each wrong judge verdict gets one automatic tag (see bench.error_tags):"),
        Terms(list(ERROR_TAGS.items())),
    ]
    judges = _judges(report)
    if not judges:
        return [
            *blocks,
            Para("No judge configurations: error tags apply to judge verdicts only."),
        ]
    tags = _tag_order(report)
    if not tags:
        return [*blocks, Para("No wrong judge verdicts, so there is nothing to tag.")]
    total = sum(report.error_tag_totals.values())
    rows: list[list[Cell]] = []
    for tag in tags:
        count = report.error_tag_totals.get(tag, 0)
        share = f"{count / total:.0%}" if total else DASH
        rows.append([tag, str(count), share])
    blocks.append(Table("error-tags", ["Tag", "Wrong verdicts", "Share"], rows))
    by_config: list[list[Cell]] = [
        [
            config.label,
            str(sum(config.error_tags.values())),
            *(str(config.error_tags.get(tag, 0)) for tag in tags),
        ]
        for config in judges
    ]
    header = ["Configuration", "Wrong verdicts", *tags]
    return [*blocks, Table("error-tags-by-config", header, by_config)]


def _transcript(verdict: WrongVerdict) -> Cell:
    path = verdict.transcript
    if not path:
        return DASH
    # Only a path inside the report folder becomes a link; quoting also defuses any scheme.
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path):
        return path
    return Link(path, quote(path, safe="/"))


def wrong_verdicts(report: BenchReport) -> list[Block]:
    """The wrong judge verdicts (up to ``WRONG_VERDICT_LIMIT``), linked to their transcripts."""
    blocks: list[Block] = [Heading("Wrong verdicts", 2, "sec-wrong-verdicts")]
    wrong = report.wrong_verdicts
    if not wrong:
        reason = (
            "no judge configurations were scored (baselines are not listed)"
            if not _judges(report)
            else "every judge verdict matched its label"
        )
        return [*blocks, Para(f"No wrong verdicts to list: {reason}.")]
    blocks.append(
        Para(
            f"{len(wrong)} wrong judge verdicts (baselines are not listed). Transcripts are "
            "relative to this report's folder."
        )
    )
    rows: list[list[Cell]] = [
        [
            item.config,
            item.trajectory_id,
            str(item.run),
            item.label,
            item.verdict,
            item.tag,
            _transcript(item),
            shorten(item.detail),
        ]
        for item in wrong[:WRONG_VERDICT_LIMIT]
    ]
    header = [
        "Configuration",
        "Trajectory",
        "Run",
        "Label",
        "Verdict",
        "Tag",
        "Transcript",
        "Detail",
    ]
    blocks.append(Table("wrong-verdicts", header, rows))
    if len(wrong) > WRONG_VERDICT_LIMIT:
        more = len(wrong) - WRONG_VERDICT_LIMIT
        blocks.append(
            Para(f"… and {more} more wrong verdicts not listed here (all are in report.json).")
        )
    return blocks


def document(report: BenchReport) -> list[Block]:
    """Every block of the report, in order."""
    return [
        *title_and_notes(report),
        *label_counts(report),
        *main_table(report),
        *detailed_metrics(report),
        *paired_tests(report),
        *modalities(report),
        *ranking(report),
        *plots(report),
        *error_tags(report),
        *wrong_verdicts(report),
    ]

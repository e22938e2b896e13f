"""The bench report's figures: F1 against turn budget, confusion matrices, and cost against F1.

Owns drawing only: every number comes from a ``BenchReport`` (the turn-budget figure's through
``turn_plot``, which tests and the report's text alternative read too). Each function builds its own
``Figure`` on an Agg canvas (never pyplot), so plotting is headless and safe from any thread,
and returns the figure as PNG bytes.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator, StrMethodFormatter

from bench.scores import BenchReport, ConfigScores, GroupScores, Interval, TurnCurve

__all__ = [
    "MAX_CONFUSION_PANELS",
    "PLOTS",
    "Level",
    "TurnPlot",
    "confusion_matrices",
    "cost_vs_f1",
    "f1_vs_turns",
    "f1_vs_turns_figure",
    "turn_plot",
]

MAX_CONFUSION_PANELS = 24
"""Confusion matrices drawn at most; the title says when configurations were left out."""

BASELINE_DASHES: tuple[tuple[int, tuple[float, ...]], ...] = (
    (0, (6, 2)),
    (0, (1, 1.5)),
    (0, (4, 1.5, 1, 1.5)),
    (0, (10, 3)),
    (0, (2, 2)),
    (0, (4, 1.5, 1, 1.5, 1, 1.5)),
)
"""A dash pattern per baseline (cycled), so that baselines of close F1 stay apart in grey."""

_COLUMNS = 4
"""Confusion-matrix panels per row."""

_DPI = 110

_LINE_HEIGHT = 0.04
"""A 7-point text line in F1 units on the cost plot's axes, for placing labels."""
_CHAR_WIDTH_PT = 4.2
"""Average width of a 7-point character."""
_AXES_WIDTH_PT = 450.0
"""About the cost plot's axes width."""
_LABEL_OFFSET_PT = 7.0
"""Gap between a point and its label."""


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    # No "Software" text chunk: the bytes depend on the data only.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _plain(text: str) -> str:
    """Text shown literally: a ``$`` would otherwise start matplotlib math mode."""
    return text.replace("$", r"\$")


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(_plain(text), width, break_long_words=True)) or " "


def _overall(config: ConfigScores) -> GroupScores | None:
    return config.group("overall")


def _error(value: float, interval: Interval | None) -> tuple[float, float]:
    """Below and above distances of an error bar (0 when there is no interval)."""
    if interval is None:
        return 0.0, 0.0
    return max(0.0, value - interval.low), max(0.0, interval.high - value)


def _names(labels: list[str], limit: int = 4) -> str:
    shown = ", ".join(labels[:limit])
    return shown + (f" (+{len(labels) - limit} more)" if len(labels) > limit else "")


def _scripted_suffix(report: BenchReport) -> str:
    """A title line when every judge is the scripted model (the figure shows no judge)."""
    judges = [config for config in report.configs if config.config.kind == "judge"]
    if judges and all(config.scripted for config in judges):
        return "\nscripted model: dry run, not judge results"
    return ""


def _label(config: ConfigScores, width: int) -> str:
    return _wrap(config.shown_label + (" [scripted]" if config.scripted else ""), width)


def _place_labels(points: list[tuple[float, float, str]], low: float, high: float) -> list[float]:
    """Label centres (F1 units) for points ``(x, y, label)`` on an x axis from ``low`` to
    ``high``: each label starts just right of its point and moves up past any label already
    placed in its way, lowest points first."""
    per_unit = _AXES_WIDTH_PT / (high - low)
    boxes: list[tuple[float, float, float, float]] = []
    centres = [y for _, y, _ in points]
    for index in sorted(range(len(points)), key=lambda index: points[index][1]):
        x, y, label = points[index]
        lines = label.split("\n")
        left = (x - low) * per_unit + _LABEL_OFFSET_PT
        right = left + _CHAR_WIDTH_PT * max(len(line) for line in lines)
        half = _LINE_HEIGHT * len(lines) / 2
        centre, moved = y, True
        # Each pass either moves the label above one more box or ends, so len(boxes) + 1
        # passes suffice; the tolerance keeps rounding in ``top + half - half`` from counting
        # as an overlap again (which looped forever).
        for _ in range(len(boxes) + 1):
            if not moved:
                break
            moved = False
            for other_left, other_right, bottom, top in boxes:
                across = left < other_right and other_left < right
                if across and centre - half < top - 1e-9 and bottom < centre + half - 1e-9:
                    centre, moved = top + half, True
        boxes.append((left, right, centre - half, centre + half))
        centres[index] = centre
    return centres


@dataclass(frozen=True)
class Level:
    """A configuration drawn as a horizontal line at its overall F1 on the turn-budget plot."""

    label: str
    """The legend's text for it."""
    f1: float
    """Its overall F1."""
    interval: Interval | None
    """Its bootstrap interval (drawn as a band for a judge)."""


@dataclass(frozen=True)
class TurnPlot:
    """What the F1-vs-turn-budget figure draws, worked out from a report before any drawing."""

    curves: list[TurnCurve]
    """Judges with a turn budget: one line per family, F1 against the budget."""
    flat_judges: list[Level]
    """Judges without a turn budget (the LLM judge reading the trajectory only, the mobile
    judge methods): a horizontal line each, with its interval as a band."""
    baselines: list[Level]
    """Baselines (no model): a dashed horizontal line each, in a legend of their own."""
    without_f1: list[str] = field(default_factory=list)
    """Configurations that have no overall F1 and are not drawn."""

    @property
    def budgets(self) -> list[int]:
        """The turn budgets on the x axis."""
        return sorted({p.turns for curve in self.curves for p in curve.points if p.turns > 0})


def turn_plot(report: BenchReport) -> TurnPlot:
    """Sort the report's configurations into what the turn-budget figure draws: every judge
    mode appears, as a curve (with turn budgets) or as a level (without)."""
    curves = [
        curve
        for curve in report.curves
        if any(p.turns > 0 and p.f1 is not None for p in curve.points)
    ]
    flat: list[Level] = []
    baselines: list[Level] = []
    without: list[str] = []
    for config in report.configs:
        is_judge = config.config.kind == "judge"
        if is_judge and config.config.turns > 0:
            continue  # on a curve
        overall = _overall(config)
        label = config.label  # named as the curves' families are (the title flags scripts)
        if overall is None or overall.f1 is None:
            without.append(label)
            continue
        level = Level(label=label, f1=overall.f1, interval=overall.f1_interval)
        (flat if is_judge else baselines).append(level)
    return TurnPlot(curves=curves, flat_judges=flat, baselines=baselines, without_f1=without)


def f1_vs_turns_figure(report: BenchReport) -> Figure:
    """The F1-vs-turn-budget figure (see ``f1_vs_turns``), for callers that read its artists."""
    data = turn_plot(report)
    figure = _figure(7.5, 5.6)
    axes = figure.add_subplot()
    colours = [f"C{index}" for index in range(10)]
    judges: list[Artist | ErrorbarContainer] = []
    for index, curve in enumerate(data.curves):
        points = [p for p in curve.points if p.turns > 0 and p.f1 is not None]
        values = [p.f1 for p in points if p.f1 is not None]
        bars = np.array([_error(p.f1, p.interval) for p in points if p.f1 is not None]).T
        drawn = axes.errorbar(
            [p.turns for p in points],
            values,
            yerr=bars,
            marker="o",
            capsize=4,
            color=colours[index % len(colours)],
            label=_plain(
                f"{curve.family} (by turn budget)"
                + (f" [{curve.incomplete}]" if curve.incomplete else "")
            ),
        )
        judges.append(drawn)
    for index, level in enumerate(data.flat_judges, start=len(data.curves)):
        colour = colours[index % len(colours)]
        if level.interval is not None:
            axes.axhspan(
                level.interval.low, level.interval.high, color=colour, alpha=0.12, linewidth=0
            )
        line = axes.axhline(
            level.f1,
            linestyle="-.",
            linewidth=2.0,
            color=colour,
            label=_plain(f"{level.label} (no turn budget; F1 {level.f1:.2f})"),
        )
        judges.append(line)
    baselines: list[Artist] = []
    for index, level in enumerate(data.baselines):
        line = axes.axhline(
            level.f1,
            linestyle=BASELINE_DASHES[index % len(BASELINE_DASHES)],
            linewidth=1.2,
            color=str(0.15 + 0.6 * (index % 4) / 4),
            label=_plain(f"{level.label} (F1 {level.f1:.2f})"),
        )
        baselines.append(line)
    budgets = data.budgets
    if budgets:
        axes.set_xscale("log", base=2)
        axes.xaxis.set_major_locator(FixedLocator(budgets))
        axes.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
        axes.xaxis.set_minor_locator(NullLocator())
        axes.set_xlim(budgets[0] / 1.5, budgets[-1] * 1.5)
        axes.set_xlabel("turn budget (log2 scale); judges without one are horizontal lines")
    else:
        axes.set_xticks([])
        axes.set_xlabel("turn budget: no judge was run with a turn budget")
    axes.set_ylim(-0.02, 1.02)
    axes.set_ylabel("overall F1 (95% bootstrap interval)")
    axes.grid(alpha=0.3)
    title = "Overall F1 vs turn budget" + _scripted_suffix(report)
    if not data.curves and not data.flat_judges:
        title += "\nno judge results: baselines only"
    if data.without_f1:
        title += "\n" + _wrap(f"without an F1, not drawn: {_names(data.without_f1)}", 90)
    axes.set_title(title, fontsize=10)
    if judges:
        figure.legend(
            handles=judges, title="judges", loc="outside lower left", fontsize=7, title_fontsize=8
        )
    if baselines:
        figure.legend(
            handles=baselines,
            title="baselines (no model)",
            loc="outside lower right",
            fontsize=7,
            title_fontsize=8,
        )
    if not judges and not baselines:
        axes.text(0.5, 0.5, "nothing to draw", ha="center", va="center", transform=axes.transAxes)
    return figure


def f1_vs_turns(report: BenchReport) -> bytes:
    """Draw overall F1 against the turn budget: one line with bootstrap error bars per judge
    family that has turn budgets; every judge without one (the LLM judge, the mobile methods)
    as a dash-dotted horizontal line over a band of its interval; and every baseline as a thin
    dashed grey line in a legend of its own. With nothing to draw the title says so."""
    return _png(f1_vs_turns_figure(report))


def _confusion_rows(overall: GroupScores) -> list[list[int]]:
    """Rows PASS / FAIL (the labels), columns judged PASS / FAIL / INVALID."""
    counts = overall.confusion
    return [
        [counts.tp, counts.fn - counts.invalid_on_pass, counts.invalid_on_pass],
        [counts.fp - counts.invalid_on_fail, counts.tn, counts.invalid_on_fail],
    ]


def confusion_matrices(report: BenchReport) -> bytes:
    """Draw one small confusion matrix per configuration (judges and baselines) on the overall
    group: rows are the labels PASS / FAIL, columns the verdicts PASS / FAIL / INVALID, each cell
    annotated with its count and shaded by its share of the row."""
    shown = report.configs[:MAX_CONFUSION_PANELS]
    columns = max(1, min(_COLUMNS, len(shown)))
    rows = max(1, math.ceil(len(shown) / columns))
    figure = _figure(3.3 * columns, 2.7 * rows + 0.7)
    grid = figure.subplots(rows, columns, squeeze=False)
    for axes, config in zip(grid.flat, shown, strict=False):
        axes.set_title(_label(config, 30), fontsize=8)
        overall = _overall(config)
        if overall is None:
            axes.text(0.5, 0.5, "no overall scores", ha="center", va="center", fontsize=8)
            axes.set_axis_off()
            continue
        counts = np.array(_confusion_rows(overall), dtype=float)
        totals = counts.sum(axis=1, keepdims=True)
        shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        axes.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        for (row, column), count in np.ndenumerate(counts):
            colour = "white" if shares[row, column] > 0.6 else "black"
            axes.text(column, row, f"{int(count)}", ha="center", va="center", color=colour)
        axes.set_xticks([0, 1, 2], ["PASS", "FAIL", "INVALID"], fontsize=7)
        axes.set_yticks([0, 1], ["PASS", "FAIL"], fontsize=7)
        axes.set_xlabel("judged", fontsize=7)
        axes.set_ylabel("label", fontsize=7)
    for axes in list(grid.flat)[len(shown) :]:
        axes.set_axis_off()
    title = "Confusion matrices, overall (shade: share of the label's row)"
    title += _scripted_suffix(report)
    if not shown:
        title += "\nno configurations in the report"
    elif len(report.configs) > len(shown):
        title += f"\nfirst {len(shown)} of {len(report.configs)} configurations shown"
    figure.suptitle(title, fontsize=10)
    return _png(figure)


def cost_vs_f1(report: BenchReport) -> bytes:
    """Draw each configuration's overall F1 (with its interval) against its cost per verdict in
    dollars. Baselines cost nothing; judges whose cost is unknown are drawn hollow at $0 and the
    title says so; configurations without an F1 are left out and named in the title."""
    figure = _figure(7.5, 5.0)
    axes = figure.add_subplot()
    unknown: list[str] = []
    omitted: list[str] = []
    drawn: list[tuple[float, float, str]] = []
    for index, config in enumerate(report.configs):
        overall = _overall(config)
        if overall is None or overall.f1 is None:
            omitted.append(config.label)
            continue
        baseline = config.config.kind == "baseline"
        cost = 0.0 if baseline else config.cost_per_verdict
        if cost is None:
            unknown.append(config.label)
        colour = "0.45" if baseline else f"C{index % 10}"
        below, above = _error(overall.f1, overall.f1_interval)
        axes.errorbar(
            [cost or 0.0],
            [overall.f1],
            yerr=[[below], [above]],
            marker="s" if baseline else "o",
            markersize=7,
            capsize=4,
            color=colour,
            markerfacecolor="none" if cost is None else colour,
        )
        drawn.append((cost or 0.0, overall.f1, _label(config, 28)))
    widest = max([x for x, _, _ in drawn] + [0.01])
    low, high = -0.08 * widest, 1.35 * widest
    axes.set_xlim(low, high)
    for (x, y, label), centre in zip(drawn, _place_labels(drawn, low, high), strict=True):
        axes.annotate(
            label,
            (x, y),
            xytext=(_LABEL_OFFSET_PT, centre),
            textcoords=("offset points", "data"),
            fontsize=7,
            va="center",
            arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.6}
            if centre > y
            else None,
        )
    axes.set_ylim(-0.02, 1.08)
    axes.xaxis.set_major_formatter(StrMethodFormatter("${x:.4g}"))
    axes.set_xlabel("cost per verdict (dollars; baselines cost nothing)")
    axes.set_ylabel("overall F1 (95% bootstrap interval)")
    axes.grid(alpha=0.3)
    title = "Overall F1 vs cost per verdict" + _scripted_suffix(report)
    if unknown:
        title += "\n" + _wrap(f"hollow, drawn at $0, cost unknown: {_names(unknown)}", 90)
    if omitted:
        title += "\n" + _wrap(f"not drawn, no overall F1: {_names(omitted)}", 90)
    if len(omitted) == len(report.configs):
        axes.text(0.5, 0.5, "nothing to draw", ha="center", va="center", transform=axes.transAxes)
    axes.set_title(title, fontsize=10)
    return _png(figure)


PLOTS: dict[str, Callable[[BenchReport], bytes]] = {
    "f1-vs-turns": f1_vs_turns,
    "confusion": confusion_matrices,
    "cost-vs-f1": cost_vs_f1,
}
"""Every figure of the report by file stem (``plots/<stem>.png``), in report order."""

"""Renders a scored ``BenchReport`` as Markdown and as one self-contained HTML page, and writes
the report folder (``report.md``, ``report.html``, ``report.json``, ``plots/*.png``).

Owns presentation only: every number is read from the report, never computed here. Both pages
are built from the same list of blocks (headings, sentences, tables, plots), so they show the
same content in the same order.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from bench.error_tags import ERROR_TAGS
from bench.plots import PLOTS
from bench.scores import (
    BenchReport,
    ConfigScores,
    GroupScores,
    Interval,
    RunSpread,
    WrongVerdict,
)
from storage.files import write_bytes_atomic

__all__ = [
    "WRONG_VERDICT_LIMIT",
    "ReportFiles",
    "format_interval",
    "format_number",
    "render_html",
    "render_markdown",
    "write_report",
]

DASH = "\u2013"
"""Shown for a value that does not exist."""

WRONG_VERDICT_LIMIT = 500
"""Wrong verdicts listed at most; a sentence says how many more there are."""

_DETAIL_CHARS = 200

_MINUS = "\u2212"
_RHO = "\u03c1"


class ReportFiles(BaseModel):
    """Where ``write_report`` put the report."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    markdown: Path
    """``report.md``."""
    html: Path
    """``report.html`` (plots embedded)."""
    json_file: Path
    """``report.json``: the ``BenchReport`` model dump."""
    plots: dict[str, Path]
    """Each figure's PNG under ``plots/``, by name."""


# ---------------------------------------------------------------------------------------------
# Formatting numbers.


def format_number(value: float | None, digits: int = 3) -> str:
    """A value with fixed decimals, or a dash when it does not exist."""
    return DASH if value is None else f"{value:.{digits}f}"


def format_interval(value: float | None, interval: Interval | None, *, signed: bool = False) -> str:
    """A value with its interval, e.g. ``0.812 [0.70, 0.90]``; a dash when there is no value,
    the bare value when there is no interval; ``signed`` prints ``+`` on differences."""
    if value is None:
        return DASH
    sign = "+" if signed else ""
    text = f"{value:{sign}.3f}"
    if interval is not None:
        text += f" [{interval.low:{sign}.2f}, {interval.high:{sign}.2f}]"
    return text


def _signed(value: float | None) -> str:
    return DASH if value is None else f"{value:+.3f}"


def _p_value(value: float | None) -> str:
    if value is None:
        return DASH
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _spread(spread: RunSpread | None) -> str:
    """Avg@k as ``mean ± std [t-interval] (k=…)``; a dash for a single run."""
    if spread is None or spread.runs <= 1:
        return DASH
    text = f"{spread.mean:.3f}"
    if spread.std is not None:
        text += f" ± {spread.std:.3f}"
    if spread.interval is not None:
        text += f" [{spread.interval.low:.2f}, {spread.interval.high:.2f}]"
    return text + f" (k={spread.runs})"


def _cost(value: float | None) -> str:
    if value is None:
        return "unknown"
    if value == 0 or value >= 0.0001:
        return f"${value:.4f}"
    return f"${value:.1e}"


def _shorten(text: str | None, limit: int = _DETAIL_CHARS) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Escaping.

_MD_ESCAPES = str.maketrans({char: "\\" + char for char in "\\|*`"})
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")
"""A ``<`` that could open raw HTML (``<0.001`` cannot)."""


def _md_text(text: str) -> str:
    """Plain text safe in Markdown (and in a table cell: one line, no bare pipes or HTML)."""
    return _MD_TAG.sub(r"\\<", " ".join(text.split()).translate(_MD_ESCAPES))


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


# ---------------------------------------------------------------------------------------------
# The document: blocks that render themselves as Markdown and as HTML.


@dataclass(frozen=True)
class _Link:
    text: str
    href: str


_Cell = str | _Link

_NUMBER = re.compile(f"^(?:[-+<$\u2212]?\\d|{DASH}$)")
"""A cell the HTML table right-aligns: a number, a p-value, a cost, or a dash."""


def _md_cell(cell: _Cell) -> str:
    if isinstance(cell, _Link):
        return f"[{_md_text(cell.text)}]({cell.href})"
    return _md_text(cell) if cell else " "


def _html_cell(cell: _Cell) -> str:
    if isinstance(cell, _Link):
        return f'<a href="{_esc(cell.href)}">{_esc(cell.text)}</a>'
    return _esc(cell)


@dataclass(frozen=True)
class _Heading:
    text: str
    level: int
    id: str

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        return "#" * self.level + " " + _md_text(self.text)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        tag = f"h{self.level}"
        return f'<{tag} id="{_esc(self.id)}">{_esc(self.text)}</{tag}>'


@dataclass(frozen=True)
class _Para:
    text: str
    css_class: str = ""

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        return _md_text(self.text)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        attributes = f' class="{_esc(self.css_class)}"' if self.css_class else ""
        return f"<p{attributes}>{_esc(self.text)}</p>"


@dataclass(frozen=True)
class _Callout:
    title: str
    items: list[str]

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        lines = [f"> **{_md_text(self.title)}**", ">"]
        lines.extend(f"> - {_md_text(item)}" for item in self.items)
        return "\n".join(lines)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        items = "".join(f"<li>{_esc(item)}</li>" for item in self.items)
        return (
            f'<div class="callout" role="note"><strong>{_esc(self.title)}</strong>'
            f"<ul>{items}</ul></div>"
        )


@dataclass(frozen=True)
class _Terms:
    items: list[tuple[str, str]]

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        return "\n".join(f"- **{_md_text(term)}**: {_md_text(text)}" for term, text in self.items)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        items = "".join(f"<dt>{_esc(term)}:</dt><dd>{_esc(text)}</dd>" for term, text in self.items)
        return f"<dl>{items}</dl>"


@dataclass(frozen=True)
class _Table:
    id: str
    header: list[str]
    rows: list[list[_Cell]]
    emphasis: frozenset[int] = field(default_factory=frozenset)
    """Row indexes drawn apart (the Improvement rows)."""

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        lines = [
            "| " + " | ".join(_md_text(name) for name in self.header) + " |",
            "|" + "|".join("---" for _ in self.header) + "|",
        ]
        lines.extend("| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in self.rows)
        return "\n".join(lines)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        head = "".join(f'<th scope="col">{_esc(name)}</th>' for name in self.header)
        body: list[str] = []
        for index, row in enumerate(self.rows):
            attributes = ' class="emphasis"' if index in self.emphasis else ""
            cells = "".join(
                f'<td class="num">{_html_cell(cell)}</td>'
                if isinstance(cell, str) and _NUMBER.match(cell)
                else f"<td>{_html_cell(cell)}</td>"
                for cell in row
            )
            body.append(f"<tr{attributes}>{cells}</tr>")
        return (
            f'<div class="scroll"><table id="{_esc(self.id)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )


@dataclass(frozen=True)
class _Plot:
    id: str
    name: str
    alt: str

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        path = plot_files.get(self.name)
        if path is None:
            return (
                f"Plot not written here: report.html embeds it, and write_report saves it as "
                f"plots/{_md_text(self.name)}.png."
            )
        alt = _md_text(self.alt).replace("[", "(").replace("]", ")")
        return f"![{alt}]({quote(path, safe='/')})"

    def html(self, pngs: Mapping[str, bytes]) -> str:
        png = pngs.get(self.name)
        if png is None:
            return f"<p>Plot not drawn: {_esc(self.alt)}</p>"
        data = base64.b64encode(png).decode("ascii")
        return (
            f'<figure><img id="{_esc(self.id)}" src="data:image/png;base64,{data}" '
            f'alt="{_esc(self.alt)}"></figure>'
        )


_Block = _Heading | _Para | _Callout | _Terms | _Table | _Plot


def _judges(report: BenchReport) -> list[ConfigScores]:
    return [config for config in report.configs if config.config.kind == "judge"]


def _baselines(report: BenchReport) -> list[ConfigScores]:
    return [config for config in report.configs if config.config.kind == "baseline"]


def _header_blocks(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [
        _Heading(report.title, 1, "title"),
        _Para(
            f"Dataset: {report.dataset} · Generated: {report.generated_at} · "
            f"Bootstrap replicates: {report.bootstrap_replicates}",
            "meta",
        ),
    ]
    notes = list(report.notes)
    for config in report.configs:
        named = config.config.model or config.label
        if config.scripted and not any(named in note for note in notes):
            notes.append(f"{config.label}: scripted model, a dry run, not judge results.")
    if notes:
        blocks.append(_Callout("Notes", notes))
    return blocks


def _label_counts(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [_Heading("Label counts", 2, "sec-label-counts")]
    names = list(report.groups) + [g for g in report.label_counts if g not in report.groups]
    if not names:
        return [*blocks, _Para("No labelled trajectories: the report has no groups.")]
    rows: list[list[_Cell]] = []
    for name in names:
        counts = report.label_counts.get(name, {})
        passed, failed = counts.get("PASS", 0), counts.get("FAIL", 0)
        level = report.group_levels.get(name, "")
        rows.append([name, level, str(passed), str(failed), str(passed + failed)])
    header = ["Group", "Level", "PASS", "FAIL", "Total"]
    return [*blocks, _Table("label-counts", header, rows)]


def _main_table(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [
        _Heading("Main table: F1 by group", 2, "sec-main-table"),
        _Para(
            "Each cell is F1 (PASS is the positive class) on the group's trajectories, pooled "
            "over runs, with its 95% task-cluster bootstrap interval. Improvement rows give "
            f"F1(agent) {_MINUS} F1(LLM) for the same model."
        ),
    ]
    if not report.configs:
        return [*blocks, _Para("No configurations were scored, so there is nothing to show.")]

    def row(config: ConfigScores) -> list[_Cell]:
        cells: list[_Cell] = [config.label]
        for name in report.groups:
            group = config.group(name)
            cells.append(DASH if group is None else format_interval(group.f1, group.f1_interval))
        return cells

    rows = [row(config) for config in _judges(report)]
    first_improvement = len(rows)
    for improvement in report.improvements:
        deltas = [_signed(improvement.delta_f1.get(name)) for name in report.groups]
        rows.append([improvement.label, *deltas])
    emphasis = frozenset(range(first_improvement, len(rows)))
    rows.extend(row(config) for config in _baselines(report))
    header = ["Configuration", *report.groups]
    blocks.append(_Table("main-table", header, rows, emphasis=emphasis))
    if not report.improvements:
        blocks.append(
            _Para("No Improvement rows: no agent-mode configuration has an LLM counterpart.")
        )
    return blocks


def _detailed_row(config: ConfigScores) -> list[_Cell]:
    overall: GroupScores | None = config.group("overall")
    tail: list[_Cell] = [
        str(config.verdicts),
        _cost(config.cost_per_verdict),
        f"{config.turns_per_verdict:.2f}",
        f"{config.tool_calls_per_verdict:.2f}",
    ]
    if overall is None:
        return [config.label, *[DASH] * 9, *tail]
    return [
        config.label,
        format_number(overall.accuracy),
        format_number(overall.precision),
        format_number(overall.recall),
        format_interval(overall.f1, overall.f1_interval),
        format_interval(overall.balanced_accuracy, overall.balanced_accuracy_interval),
        format_number(overall.fpr),
        format_number(overall.fnr),
        str(overall.confusion.invalid),
        _spread(overall.f1_runs),
        *tail,
    ]


def _detailed(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [
        _Heading("Detailed metrics (overall)", 2, "sec-detailed-metrics"),
        _Para(
            "All trajectories, pooled over runs. INVALID verdicts count as wrong. Avg@k F1 is "
            "F1 computed per run, then averaged: mean ± std [95% t-interval]."
        ),
    ]
    if not report.configs:
        return [*blocks, _Para("No configurations were scored.")]
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
    return [*blocks, _Table("detailed-metrics", header, rows)]


def _paired(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [
        _Heading("Agent vs LLM paired tests", 2, "sec-paired-tests"),
    ]
    if not report.improvements:
        return [
            *blocks,
            _Para(
                "No paired tests: the report has no agent-mode configuration with an LLM "
                "configuration of the same model and variant to compare it with."
            ),
        ]
    blocks.append(
        _Para(
            "Same trajectories, same runs. McNemar: exact test on the pairs only one judge got "
            f"right. ΔF1: F1(agent) {_MINUS} F1(LLM) with its paired task-cluster bootstrap "
            "interval."
        )
    )
    rows: list[list[_Cell]] = []
    for improvement in report.improvements:
        paired = improvement.paired
        rows.append(
            [
                improvement.label,
                str(paired.pairs),
                str(paired.agent_only_correct),
                str(paired.llm_only_correct),
                _p_value(paired.mcnemar_p),
                format_interval(paired.delta_f1, paired.delta_f1_interval, signed=True),
                _p_value(paired.bootstrap_p),
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
    return [*blocks, _Table("paired-tests", header, rows)]


def _ranking(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [_Heading("Ranking fidelity", 2, "sec-ranking")]
    ranked = [config for config in report.configs if config.ranking is not None]
    if not ranked:
        return [
            *blocks,
            _Para(
                "No ranking fidelity: it needs trajectories from at least two agents, and no "
                "configuration has them."
            ),
        ]
    blocks.append(
        _Para(
            f"Does the judge rank the agents as the labels do? Spearman {_RHO} between each "
            "agent's success rate by the labels and by the judge "
            f"({DASH} when either is constant); MAE of "
            "the judged rates. Rates are shown as label → judged."
        )
    )
    rows: list[list[_Cell]] = []
    for config in ranked:
        ranking = config.ranking
        assert ranking is not None
        rho = format_number(ranking.spearman_rho)
        if ranking.spearman_p is not None:
            rho += f" (p={_p_value(ranking.spearman_p)})"
        rates = "; ".join(
            f"{agent} {label:.2f} → {judged:.2f}"
            for agent, label, judged in zip(
                ranking.agents, ranking.label_rates, ranking.judged_rates, strict=False
            )
        )
        rows.append([config.label, str(len(ranking.agents)), rho, f"{ranking.mae:.3f}", rates])
    header = ["Configuration", "Agents", f"Spearman {_RHO} (p)", "MAE", "Success rate per agent"]
    return [*blocks, _Table("ranking", header, rows)]


def _plot_blocks(report: BenchReport) -> list[_Block]:
    families = [curve.family for curve in report.curves]
    baselines = [config.label for config in _baselines(report)]
    if families:
        curves = f"{len(families)} judge famil{'y' if len(families) == 1 else 'ies'} "
        curves += f"({', '.join(families)})"
    else:
        curves = "no judge families (no turn-budget curves)"
    turns_alt = (
        f"Line chart of overall F1 (0 to 1) against turn budget on a log2 axis for {curves}, "
        f"with {len(baselines)} baseline(s) as dashed horizontal lines."
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
        _Heading("Plots", 2, "sec-plots"),
        _Heading("F1 vs turn budget", 3, "sec-plot-f1-vs-turns"),
        _Plot("plot-f1-vs-turns", "f1-vs-turns", turns_alt),
        _Heading("Confusion matrices", 3, "sec-plot-confusion"),
        _Plot("plot-confusion", "confusion", confusion_alt),
        _Heading("Cost vs F1", 3, "sec-plot-cost-vs-f1"),
        _Plot("plot-cost-vs-f1", "cost-vs-f1", cost_alt),
    ]


def _tag_order(report: BenchReport) -> list[str]:
    seen = set(report.error_tag_totals)
    for config in report.configs:
        seen.update(config.error_tags)
    known = [tag for tag in ERROR_TAGS if tag in seen]
    return known + sorted(seen - set(ERROR_TAGS))


def _error_tags(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [
        _Heading("Error tags", 2, "sec-error-tags"),
        _Para("Each wrong judge verdict gets one automatic tag (see bench.error_tags):"),
        _Terms(list(ERROR_TAGS.items())),
    ]
    judges = _judges(report)
    if not judges:
        return [
            *blocks,
            _Para("No judge configurations: error tags apply to judge verdicts only."),
        ]
    tags = _tag_order(report)
    if not tags:
        return [*blocks, _Para("No wrong judge verdicts, so there is nothing to tag.")]
    total = sum(report.error_tag_totals.values())
    rows: list[list[_Cell]] = []
    for tag in tags:
        count = report.error_tag_totals.get(tag, 0)
        share = f"{count / total:.0%}" if total else DASH
        rows.append([tag, str(count), share])
    blocks.append(_Table("error-tags", ["Tag", "Wrong verdicts", "Share"], rows))
    by_config: list[list[_Cell]] = [
        [
            config.label,
            str(sum(config.error_tags.values())),
            *(str(config.error_tags.get(tag, 0)) for tag in tags),
        ]
        for config in judges
    ]
    header = ["Configuration", "Wrong verdicts", *tags]
    return [*blocks, _Table("error-tags-by-config", header, by_config)]


def _transcript(verdict: WrongVerdict) -> _Cell:
    path = verdict.transcript
    if not path:
        return DASH
    # Only a path inside the report folder becomes a link; quoting also defuses any scheme.
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path):
        return path
    return _Link(path, quote(path, safe="/"))


def _wrong_verdicts(report: BenchReport) -> list[_Block]:
    blocks: list[_Block] = [_Heading("Wrong verdicts", 2, "sec-wrong-verdicts")]
    wrong = report.wrong_verdicts
    if not wrong:
        reason = (
            "no judge configurations were scored (baselines are not listed)"
            if not _judges(report)
            else "every judge verdict matched its label"
        )
        return [*blocks, _Para(f"No wrong verdicts to list: {reason}.")]
    blocks.append(
        _Para(
            f"{len(wrong)} wrong judge verdicts (baselines are not listed). Transcripts are "
            "relative to this report's folder."
        )
    )
    rows: list[list[_Cell]] = [
        [
            item.config,
            item.trajectory_id,
            str(item.run),
            item.label,
            item.verdict,
            item.tag,
            _transcript(item),
            _shorten(item.detail),
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
    blocks.append(_Table("wrong-verdicts", header, rows))
    if len(wrong) > WRONG_VERDICT_LIMIT:
        more = len(wrong) - WRONG_VERDICT_LIMIT
        blocks.append(
            _Para(f"… and {more} more wrong verdicts not listed here (all are in report.json).")
        )
    return blocks


def _document(report: BenchReport) -> list[_Block]:
    """Every block of the report, in order."""
    return [
        *_header_blocks(report),
        *_label_counts(report),
        *_main_table(report),
        *_detailed(report),
        *_paired(report),
        *_ranking(report),
        *_plot_blocks(report),
        *_error_tags(report),
        *_wrong_verdicts(report),
    ]


# ---------------------------------------------------------------------------------------------
# Rendering.


def render_markdown(report: BenchReport, plot_files: dict[str, str] | None = None) -> str:
    """The report as Markdown. ``plot_files`` maps each plot name (``bench.plots.PLOTS``) to
    its path relative to the Markdown file; a plot without one is named in a sentence instead
    of an image."""
    files = plot_files or {}
    return "\n\n".join(block.markdown(files) for block in _document(report)) + "\n"


_CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1b1f24; background: #fff; margin: 0; }
main { max-width: 1400px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.7rem; margin-bottom: .3rem; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid #d0d7de;
     padding-bottom: .25rem; }
h3 { font-size: 1.05rem; margin-top: 1.5rem; }
.meta { color: #57606a; }
.callout { border-left: 4px solid #bf8700; background: #fff8c5; padding: .6rem 1rem;
           margin: 1rem 0; border-radius: 4px; }
.callout strong { display: block; margin-bottom: .2rem; }
.callout ul { margin: 0; padding-left: 1.2rem; }
.scroll { overflow-x: auto; margin: .8rem 0; }
table { border-collapse: collapse; font-size: .86rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .55rem; vertical-align: top; }
thead th { background: #f6f8fa; text-align: left; }
tbody tr:nth-child(even) { background: #fafbfc; }
td { max-width: 36rem; }
td:first-child { min-width: 12rem; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.emphasis, tbody tr.emphasis:nth-child(even) { background: #ddf4ff; font-style: italic; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
dl { margin: .5rem 0; }
dt { font-weight: 600; float: left; clear: left; margin-right: .4rem; }
dd { margin: 0 0 .2rem 0; }
"""


def _html(report: BenchReport, pngs: Mapping[str, bytes]) -> str:
    body = "\n".join(block.html(pngs) for block in _document(report))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(report.title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _draw(report: BenchReport) -> dict[str, bytes]:
    return {name: draw(report) for name, draw in PLOTS.items()}


def render_html(report: BenchReport) -> str:
    """The report as one self-contained HTML page: inline CSS, plots embedded as base64 PNG
    ``data:`` images, no script and no external URL; every table and plot has a stable ``id``."""
    return _html(report, _draw(report))


# ---------------------------------------------------------------------------------------------
# Files.


def write_report(report: BenchReport, folder: Path) -> ReportFiles:
    """Write ``report.md``, ``report.html``, ``report.json`` and ``plots/<name>.png`` into
    ``folder`` (created if needed), each atomically; the Markdown links the PNGs, the HTML
    embeds them."""
    plots_folder = folder / "plots"
    plots_folder.mkdir(parents=True, exist_ok=True)
    pngs = _draw(report)
    plots: dict[str, Path] = {}
    for name, png in pngs.items():
        plots[name] = plots_folder / f"{name}.png"
        write_bytes_atomic(plots[name], png)
    relative = {name: f"plots/{path.name}" for name, path in plots.items()}
    files = ReportFiles(
        markdown=folder / "report.md",
        html=folder / "report.html",
        json_file=folder / "report.json",
        plots=plots,
    )
    write_bytes_atomic(files.json_file, (report.model_dump_json(indent=2) + "\n").encode())
    write_bytes_atomic(files.markdown, render_markdown(report, relative).encode())
    write_bytes_atomic(files.html, _html(report, pngs).encode())
    return files

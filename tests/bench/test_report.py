"""The bench report's renderings: Markdown content, self-contained HTML, PNG plots, the report
folder, and the HTML as headless Chromium really shows it.

The reports are built by hand (no scoring run), so every expected number and row count here comes
from the fixture, not from the renderer.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal

import pytest
from matplotlib.image import imread

from bench.plots import PLOTS, confusion_matrices, cost_vs_f1, f1_vs_turns
from bench.report import format_interval, format_number, render_html, render_markdown, write_report
from bench.results import JudgeConfig
from bench.scores import (
    BenchReport,
    ConfigScores,
    Confusion,
    CurvePoint,
    GroupScores,
    Improvement,
    Interval,
    PairedTest,
    RankingFidelity,
    RunSpread,
    TurnCurve,
    WrongVerdict,
)
from tests.bench.chromium import INSTALL_HINT, chromium_path, render_in_chromium

REPO = Path(__file__).parents[2]
SCREENSHOTS = REPO / "test-output" / "bench"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DASH = "\u2013"
"""What the report shows for a missing value."""
MODEL = "openai/gpt-4.1-mini"
SCRIPTED = "mock/scripted"
BOLD_BASELINE = "length-<b>threshold</b>"
AGENTS = ["claude-code", "codex", "aider"]
LABEL_RATES = [0.6, 0.45, 0.35]

# Subdomain -> (domain, PASS trajectories, FAIL trajectories).
SUBDOMAINS: dict[str, tuple[str, int, int]] = {
    "fs/edit": ("filesystem", 6, 4),
    "fs/search": ("filesystem", 5, 5),
    "sql/query": ("sql", 3, 7),
}
DOMAINS = ["filesystem", "sql"]
GROUPS = [*SUBDOMAINS, *DOMAINS, "overall"]
TAG_CYCLE = ["needs review", "tool error", "budget exhausted", "no tool call"]

HEADINGS = [
    "## Label counts",
    "## Main table: F1 by group",
    "## Detailed metrics (overall)",
    "## Agent vs LLM paired tests",
    "## Ranking fidelity",
    "## Plots",
    "### F1 vs turn budget",
    "### Confusion matrices",
    "### Cost vs F1",
    "## Error tags",
    "## Wrong verdicts",
]
PLOT_IDS = ["plot-f1-vs-turns", "plot-confusion", "plot-cost-vs-f1"]


# ---------------------------------------------------------------------------------------------
# Building reports by hand.


def _ratio(top: int, bottom: int) -> float | None:
    return top / bottom if bottom else None


def _around(value: float | None, below: float, above: float) -> Interval | None:
    if value is None:
        return None
    return Interval(low=max(0.0, value - below), high=min(1.0, value + above))


def _group(name: str, counts: Confusion, trajectories: int, runs: int) -> GroupScores:
    """Scores computed from counts, with made-up but consistent intervals and run spreads."""
    precision = _ratio(counts.tp, counts.tp + counts.fp)
    recall = _ratio(counts.tp, counts.tp + counts.fn)
    specificity = _ratio(counts.tn, counts.tn + counts.fp)
    f1: float | None = None
    if precision is not None and recall is not None:
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    balanced = None if recall is None or specificity is None else (recall + specificity) / 2
    level: Literal["subdomain", "domain", "overall"] = (
        "overall" if name == "overall" else "domain" if name in DOMAINS else "subdomain"
    )
    spread = None
    if f1 is not None and runs > 1:
        spread = RunSpread(runs=runs, mean=f1, std=0.031, interval=_around(f1, 0.07, 0.07))
    return GroupScores(
        group=name,
        level=level,
        predictions=counts.total,
        trajectories=trajectories,
        confusion=counts,
        accuracy=_ratio(counts.tp + counts.tn, counts.total),
        precision=precision,
        recall=recall,
        f1=f1,
        balanced_accuracy=balanced,
        fpr=_ratio(counts.fp, counts.fp + counts.tn),
        fnr=_ratio(counts.fn, counts.fn + counts.tp),
        f1_interval=_around(f1, 0.12, 0.09),
        balanced_accuracy_interval=_around(balanced, 0.1, 0.1),
        f1_runs=spread,
    )


def _add(first: Confusion, second: Confusion) -> Confusion:
    fields = Confusion.model_fields
    return Confusion(**{key: getattr(first, key) + getattr(second, key) for key in fields})


def _config(
    config: JudgeConfig,
    *,
    pass_right: float,
    fail_right: float,
    runs: int,
    cost: float | None,
    invalid: int = 0,
    scripted: bool = False,
    ranked: bool = True,
) -> ConfigScores:
    """A configuration that gets ``pass_right`` of PASS and ``fail_right`` of FAIL right."""
    counts: dict[str, Confusion] = {}
    sizes: dict[str, int] = {}
    for name, (domain, passes, fails) in SUBDOMAINS.items():
        tp = round(pass_right * passes * runs)
        tn = round(fail_right * fails * runs)
        fn, fp = passes * runs - tp, fails * runs - tn
        counts[name] = Confusion(
            tp=tp,
            fn=fn,
            tn=tn,
            fp=fp,
            invalid_on_pass=min(invalid, fn),
            invalid_on_fail=min(invalid, fp),
        )
        sizes[name] = passes + fails
        for parent in (domain, "overall"):
            counts[parent] = _add(counts.get(parent, Confusion()), counts[name])
            sizes[parent] = sizes.get(parent, 0) + passes + fails
    judged = [min(1.0, rate + 0.2 * (pass_right - fail_right)) for rate in LABEL_RATES]
    if fail_right == 0.0:  # judges everything PASS: constant rates, no Spearman
        judged = [1.0] * len(AGENTS)
    ranking = RankingFidelity(
        agents=AGENTS,
        label_rates=LABEL_RATES,
        judged_rates=judged,
        spearman_rho=None if len(set(judged)) == 1 else 1.0,
        spearman_p=None if len(set(judged)) == 1 else 0.0,
        mae=sum(abs(a - b) for a, b in zip(judged, LABEL_RATES, strict=True)) / len(AGENTS),
    )
    is_judge = config.kind == "judge"
    return ConfigScores(
        config=config,
        label=config.label,
        scripted=scripted,
        groups=[_group(name, counts[name], sizes[name], runs) for name in GROUPS],
        verdicts=counts["overall"].total,
        cost_per_verdict=cost,
        turns_per_verdict=(config.turns or 1) * 0.8 if is_judge else 0.0,
        tool_calls_per_verdict=(config.turns or 0) * 0.6,
        ranking=ranking if ranked else None,
    )


def _wrong_verdicts(config: ConfigScores, runs: int) -> list[WrongVerdict]:
    """One wrong verdict per FN and FP of the overall group, with tags and transcripts."""
    overall = config.group("overall")
    assert overall is not None
    counts = overall.confusion
    wrong: list[WrongVerdict] = []
    for label, verdict, errors, invalid in (
        ("PASS", "FAIL", counts.fn, counts.invalid_on_pass),
        ("FAIL", "PASS", counts.fp, counts.invalid_on_fail),
    ):
        for index in range(errors):
            trajectory = f"{list(SUBDOMAINS)[index % 3].replace('/', '-')}-{index:02d}"
            run = index % runs + 1
            key = f"{config.config.name}-t{config.config.turns}-{trajectory}-r{run}"
            tag = "needs review"
            if config.config.name != "llm":
                tag = TAG_CYCLE[index % len(TAG_CYCLE)]
            detail = f"Looks right | checked {trajectory}.\nSecond line."
            if index < invalid:
                tag = "harness error" if index == 0 and label == "PASS" else "invalid verdict"
                verdict_text, detail = "INVALID", "no verdict in the reply"
            else:
                verdict_text = verdict
            wrong.append(
                WrongVerdict(
                    config=config.label,
                    trajectory_id=trajectory,
                    run=run,
                    label=label,
                    verdict=verdict_text,
                    tag=tag,
                    transcript=None if tag == "harness error" else f"logs/{key}.jsonl",
                    detail=detail,
                )
            )
    return wrong


def _baselines(*, ranked: bool) -> list[ConfigScores]:
    return [
        _config(
            JudgeConfig(kind="baseline", name="always-pass"),
            pass_right=1.0,
            fail_right=0.0,
            runs=1,
            cost=0.0,
            ranked=ranked,
        ),
        _config(
            JudgeConfig(kind="baseline", name="always-fail"),
            pass_right=0.0,
            fail_right=1.0,
            runs=1,
            cost=0.0,
            ranked=False,
        ),
        _config(
            JudgeConfig(kind="baseline", name=BOLD_BASELINE),
            pass_right=0.6,
            fail_right=0.5,
            runs=1,
            cost=0.0,
            ranked=ranked,
        ),
        _config(
            JudgeConfig(kind="baseline", name="verifier"),
            pass_right=0.9,
            fail_right=0.95,
            runs=1,
            cost=0.0,
            ranked=ranked,
        ),
    ]


def _improvement(agent: ConfigScores, llm: ConfigScores, index: int) -> Improvement:
    deltas: dict[str, float | None] = {}
    for name in GROUPS:
        mine, theirs = agent.group(name), llm.group(name)
        assert mine is not None
        assert theirs is not None
        if mine.f1 is None or theirs.f1 is None:
            deltas[name] = None
        else:
            deltas[name] = mine.f1 - theirs.f1
    overall = deltas["overall"]
    return Improvement(
        agent=agent.config,
        llm=llm.config,
        label=f"Improvement: {agent.label} vs {llm.label}",
        delta_f1=deltas,
        paired=PairedTest(
            pairs=90,
            agent_only_correct=14 + index,
            llm_only_correct=5,
            mcnemar_p=0.0004 if index == 0 else 0.0423,
            delta_f1=overall,
            delta_f1_interval=_around(overall, 0.06, 0.05) if overall is not None else None,
            bootstrap_p=0.012 + index / 10,
        ),
    )


def full_report() -> BenchReport:
    """Agent and ReAct judges at several budgets, two LLM judges, baselines, everything."""
    agents = [
        _config(
            JudgeConfig(kind="judge", name="agent", turns=turns, model=MODEL),
            pass_right=right,
            fail_right=right + 0.05,
            runs=3,
            cost=0.0021 * turns,
            invalid=1 if turns == 1 else 0,
        )
        for turns, right in ((1, 0.5), (4, 0.7), (16, 0.85))
    ]
    llm = _config(
        JudgeConfig(kind="judge", name="llm", model=MODEL),
        pass_right=0.6,
        fail_right=0.7,
        runs=3,
        cost=None,
    )
    scripted = _config(
        JudgeConfig(kind="judge", name="llm", model=SCRIPTED),
        pass_right=0.5,
        fail_right=0.5,
        runs=1,
        cost=0.0,
        scripted=True,
        ranked=False,
    )
    reacts = [
        _config(
            JudgeConfig(kind="judge", name="react", turns=turns, model=MODEL),
            pass_right=right,
            fail_right=right,
            runs=3,
            cost=0.0015 * turns,
        )
        for turns, right in ((4, 0.65), (16, 0.8))
    ]
    judges = [*agents, llm, scripted, *reacts]
    wrong = [item for judge in judges for item in _wrong_verdicts(judge, judge.verdicts // 30)]
    by_config = {
        judge.label: dict(Counter(item.tag for item in wrong if item.config == judge.label))
        for judge in judges
    }
    judges = [judge.model_copy(update={"error_tags": by_config[judge.label]}) for judge in judges]
    improvements = [
        _improvement(judges[2], judges[3], 0),
        _improvement(judges[1], judges[3], 1),
        _improvement(judges[6], judges[3], 2),
    ]

    def curve(configs: list[ConfigScores]) -> TurnCurve:
        points = []
        for config in configs:
            overall = config.group("overall")
            assert overall is not None
            points.append(
                CurvePoint(turns=config.config.turns, f1=overall.f1, interval=overall.f1_interval)
            )
        return TurnCurve(family=configs[0].config.family, points=points)

    return BenchReport(
        title="Judge bench: ds-mini",
        dataset="datasets/ds-mini",
        generated_at="2025-11-30T04:50:00+00:00",
        groups=GROUPS,
        group_levels={group.group: group.level for group in judges[0].groups},
        label_counts=_label_counts(),
        configs=[*judges, *_baselines(ranked=True)],
        improvements=improvements,
        curves=[curve(judges[:3]), curve(judges[5:])],
        wrong_verdicts=wrong,
        error_tag_totals=dict(Counter(item.tag for item in wrong)),
        notes=[
            f"scripted model: {scripted.label} is a dry run, not judge results",
            f"runs missing: {scripted.label} has 1 run of 3",
        ],
        bootstrap_replicates=1000,
    )


def baselines_report() -> BenchReport:
    """No model configured: baselines only, no curves, improvements, ranking or wrong verdicts."""
    configs = _baselines(ranked=False)
    return BenchReport(
        title="Judge bench: baselines only",
        dataset="datasets/ds-mini",
        generated_at="2025-11-30T04:51:00+00:00",
        groups=GROUPS,
        group_levels={group.group: group.level for group in configs[0].groups},
        label_counts=_label_counts(),
        configs=configs,
        notes=["no model configured: only the baselines were scored"],
    )


def _label_counts() -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for name, (domain, passes, fails) in SUBDOMAINS.items():
        counts[name] = {"PASS": passes, "FAIL": fails}
        for parent in (domain, "overall"):
            total = counts.setdefault(parent, {"PASS": 0, "FAIL": 0})
            total["PASS"] += passes
            total["FAIL"] += fails
    return counts


REPORTS: dict[str, Callable[[], BenchReport]] = {
    "full": full_report,
    "baselines": baselines_report,
}


@pytest.fixture(scope="module")
def full() -> BenchReport:
    """The report with everything."""
    return full_report()


@pytest.fixture(scope="module")
def baselines() -> BenchReport:
    """The baselines-only report."""
    return baselines_report()


def expected_tables(report: BenchReport) -> dict[str, int]:
    """Table id -> body rows, counted from the report's data (absent: no table expected)."""
    judges = [config for config in report.configs if config.config.kind == "judge"]
    tables = {
        "label-counts": len(report.groups),
        "main-table": len(report.configs) + len(report.improvements),
        "detailed-metrics": len(report.configs),
    }
    if report.improvements:
        tables["paired-tests"] = len(report.improvements)
    ranked = [config for config in report.configs if config.ranking is not None]
    if ranked:
        tables["ranking"] = len(ranked)
    if report.error_tag_totals:
        tables["error-tags"] = len(report.error_tag_totals)
        tables["error-tags-by-config"] = len(judges)
    if report.wrong_verdicts:
        tables["wrong-verdicts"] = min(500, len(report.wrong_verdicts))
    return tables


ALL_TABLES = [
    "label-counts",
    "main-table",
    "detailed-metrics",
    "paired-tests",
    "ranking",
    "error-tags",
    "error-tags-by-config",
    "wrong-verdicts",
]


# ---------------------------------------------------------------------------------------------
# Markdown.


def _md(text: str) -> str:
    """The renderer's Markdown escaping of plain text, for the labels used here."""
    return text.replace("<", r"\<").replace("|", r"\|")


def _f1(group: GroupScores | None) -> str:
    if group is None or group.f1 is None:
        return DASH
    assert group.f1_interval is not None
    return f"{group.f1:.3f} [{group.f1_interval.low:.2f}, {group.f1_interval.high:.2f}]"


def _table_lines(markdown: str, heading: str) -> list[str]:
    """The table rows (header and rule excluded) of the first table after a heading."""
    lines: list[str] = []
    for line in markdown.split(heading + "\n", 1)[1].splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    return lines[2:]


def test_number_formats() -> None:
    interval = Interval(low=0.7, high=0.9)
    assert format_interval(0.8123, interval) == "0.812 [0.70, 0.90]"
    assert format_interval(0.8123, None) == "0.812"
    assert format_interval(None, interval) == DASH
    delta = Interval(low=-0.02, high=0.18)
    assert format_interval(0.083, delta, signed=True) == "+0.083 [-0.02, +0.18]"
    assert format_number(None) == DASH
    assert format_number(0.5) == "0.500"


@pytest.mark.parametrize("name", list(REPORTS))
def test_markdown_has_every_section_in_order(name: str) -> None:
    report = REPORTS[name]()
    markdown = render_markdown(report)
    assert markdown.startswith(f"# {report.title}\n")
    assert report.dataset in markdown
    positions = [markdown.index(heading + "\n") for heading in HEADINGS]
    assert positions == sorted(positions)
    for note in report.notes:
        assert f"> - {note}" in markdown


def test_markdown_main_table(full: BenchReport) -> None:
    markdown = render_markdown(full)
    rows = _table_lines(markdown, "## Main table: F1 by group")
    judges = [config for config in full.configs if config.config.kind == "judge"]
    baselines = [config for config in full.configs if config.config.kind == "baseline"]
    expected_order = (
        [config.label for config in judges]
        + [improvement.label for improvement in full.improvements]
        + [config.label for config in baselines]
    )
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == [
        _md(label) for label in expected_order
    ]
    for config in full.configs:
        cells = [_md(config.label), *(_f1(config.group(name)) for name in full.groups)]
        assert "| " + " | ".join(cells) + " |" in rows
    # Spot checks written out: the always-fail baseline has no F1 anywhere.
    assert "| baseline: always-fail | " + " | ".join([DASH] * len(GROUPS)) + " |" in rows
    for improvement in full.improvements:
        deltas = improvement.delta_f1
        cells = [f"{deltas[name]:+.3f}" if deltas[name] is not None else DASH for name in GROUPS]
        assert f"| {improvement.label} | " + " | ".join(cells) + " |" in rows
    first = full.improvements[0].delta_f1["overall"]
    assert first is not None
    assert first > 0
    assert f"+{first:.3f}" in rows[len(judges)]


def test_markdown_details_paired_ranking_and_tags(full: BenchReport) -> None:
    markdown = render_markdown(full)
    detailed = _table_lines(markdown, "## Detailed metrics (overall)")
    assert len(detailed) == len(full.configs)
    llm = next(row for row in detailed if row.startswith(f"| llm {MODEL} |"))
    assert "unknown" in llm  # its cost per verdict is unknown
    assert " ± 0.031 [" in llm
    assert "(k=3)" in llm
    overall = full.configs[3].group("overall")
    assert overall is not None
    assert _f1(overall) in llm
    scripted = next(row for row in detailed if row.startswith(f"| llm {SCRIPTED} |"))
    assert " ± " not in scripted  # one run: no Avg@k spread
    paired = _table_lines(markdown, "## Agent vs LLM paired tests")
    assert len(paired) == len(full.improvements)
    assert "| <0.001 |" in paired[0]
    assert "| 0.042 |" in paired[1]
    ranking = _table_lines(markdown, "## Ranking fidelity")
    assert len(ranking) == sum(config.ranking is not None for config in full.configs)
    assert "claude-code 0.60 →" in ranking[0]
    assert "| always-pass" not in markdown  # baselines are labelled "baseline: …"
    tags = _table_lines(markdown, "## Error tags")
    assert len(tags) == len(full.error_tag_totals)
    for tag in ("no tool call", "tool error", "budget exhausted", "harness error", "needs review"):
        assert f"- **{tag}**: " in markdown
    wrong = _table_lines(markdown, "## Wrong verdicts")
    assert len(wrong) == len(full.wrong_verdicts)
    first = full.wrong_verdicts[0]
    assert first.transcript is None  # the harness error has no transcript
    linked = next(item for item in full.wrong_verdicts if item.transcript)
    assert f"[{linked.transcript}]({linked.transcript})" in markdown
    assert r"Looks right \| checked" in markdown  # pipes in details cannot break the table


def test_markdown_empty_sections_say_why(baselines: BenchReport) -> None:
    markdown = render_markdown(baselines)
    assert "No paired tests:" in markdown
    assert "No ranking fidelity:" in markdown
    assert "No wrong verdicts to list: no judge configurations were scored" in markdown
    assert "No judge configurations: error tags apply to judge verdicts only." in markdown
    assert "No Improvement rows" in markdown
    # Without plot files the plots are named, not linked.
    assert "![" not in markdown
    assert "Plot not written" in markdown


def test_markdown_caps_wrong_verdicts(full: BenchReport) -> None:
    many = [full.wrong_verdicts[1].model_copy(update={"run": run}) for run in range(520)]
    markdown = render_markdown(full.model_copy(update={"wrong_verdicts": many}))
    assert len(_table_lines(markdown, "## Wrong verdicts")) == 500
    assert "… and 20 more wrong verdicts not listed" in markdown


# ---------------------------------------------------------------------------------------------
# HTML.


class _Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {key: value or "" for key, value in attrs}))


def _start_tags(page: str) -> list[tuple[str, dict[str, str]]]:
    parser = _Tags()
    parser.feed(page)
    parser.close()
    return parser.tags


@pytest.mark.parametrize("name", list(REPORTS))
def test_html_is_self_contained(name: str) -> None:
    report = REPORTS[name]()
    page = render_html(report)
    without_images = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert "http" not in without_images
    assert 'src="/' not in page
    assert "<script" not in page.lower()
    assert "url(" not in without_images
    tags = _start_tags(page)
    for _, attributes in tags:
        if "src" in attributes:
            assert attributes["src"].startswith("data:image/png;base64,")
        if "href" in attributes:
            assert not re.match(r"^([a-z][a-z0-9+.-]*:|/)", attributes["href"], re.I)
    tables = [attributes.get("id", "") for tag, attributes in tags if tag == "table"]
    assert tables == [table for table in ALL_TABLES if table in expected_tables(report)]
    assert page.count("<thead>") == len(tables)
    images = {attributes["id"]: attributes for tag, attributes in tags if tag == "img"}
    assert list(images) == PLOT_IDS
    assert all(len(image["alt"]) > 40 for image in images.values())


def test_html_escapes_text(full: BenchReport) -> None:
    page = render_html(full)
    assert "<b>" not in page
    assert "baseline: length-&lt;b&gt;threshold&lt;/b&gt;" in page
    assert f"<title>{full.title}</title>" in page
    assert '<a href="logs/agent-t1-' in page


# ---------------------------------------------------------------------------------------------
# Plots.


@pytest.mark.parametrize("name", list(REPORTS))
@pytest.mark.parametrize("plot", [f1_vs_turns, confusion_matrices, cost_vs_f1])
def test_plots_are_png(name: str, plot: Callable[[BenchReport], bytes]) -> None:
    png = plot(REPORTS[name]())
    assert png.startswith(PNG_SIGNATURE)
    pixels = imread(io.BytesIO(png), format="png")
    height, width = pixels.shape[:2]
    assert width >= 400
    assert height >= 300


def test_confusion_matrices_cap_panels(full: BenchReport) -> None:
    many = [full.configs[0].model_copy(update={"label": f"copy {index}"}) for index in range(40)]
    png = confusion_matrices(full.model_copy(update={"configs": many}))
    assert png.startswith(PNG_SIGNATURE)


# ---------------------------------------------------------------------------------------------
# The report folder.


def test_write_report(full: BenchReport, tmp_path: Path) -> None:
    folder = tmp_path / "report"
    files = write_report(full, folder)
    assert files.markdown == folder / "report.md"
    assert files.html == folder / "report.html"
    assert files.json_file == folder / "report.json"
    assert set(files.plots) == set(PLOTS)
    for path in [files.markdown, files.html, files.json_file, *files.plots.values()]:
        assert path.is_file()
    for png in files.plots.values():
        assert png.parent == folder / "plots"
        assert png.read_bytes().startswith(PNG_SIGNATURE)
    markdown = files.markdown.read_text()
    for name in PLOTS:
        assert f"](plots/{name}.png)" in markdown
    assert BenchReport.model_validate_json(files.json_file.read_text()) == full
    leftovers = [path.name for path in folder.rglob("*") if path.name.startswith(".")]
    assert leftovers == []
    # Writing again replaces the files.
    write_report(baselines_report(), folder)
    assert "baselines only" in files.markdown.read_text()


# ---------------------------------------------------------------------------------------------
# Chromium.


@pytest.mark.parametrize("name", list(REPORTS))
async def test_report_renders_in_chromium(name: str, tmp_path: Path) -> None:
    if chromium_path() is None:
        pytest.fail(INSTALL_HINT)
    report = REPORTS[name]()
    files = write_report(report, tmp_path / name)
    screenshot = SCREENSHOTS / f"report-{name}.png"
    page = await render_in_chromium(files.html, screenshot)
    print(f"screenshot: {screenshot}")
    assert page.title == report.title
    assert page.table_rows == expected_tables(report)
    assert list(page.images) == PLOT_IDS
    for image_id, size in page.images.items():
        assert size.width > 0, f"{image_id} did not load"
        assert size.height > 0, f"{image_id} did not load"
    assert f"baseline: {BOLD_BASELINE}" in page.text  # escaped markup shows as text
    for note in report.notes:
        assert note in page.text
    for heading in HEADINGS:
        assert heading.lstrip("# ") in page.text
    assert screenshot.is_file()
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE)
    if name == "baselines":
        assert "No paired tests:" in page.text
        assert "No ranking fidelity:" in page.text
        assert "No wrong verdicts to list:" in page.text

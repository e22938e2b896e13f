"""The bundled search suite: rebuilt byte for byte, replayed on Chromium, judged per claim by a
scripted agent judge that browses the archive through the browser MCP server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.grid_runner import VERDICTS_FILE, GridSpec, judge_dataset, read_records
from bench.results import predictions_from_records
from bench.scoring import build_report
from dataset.store import load_dataset
from judge_agent.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    ToolInfo,
)
from judge_agent.providers.mock import Reply, ScriptedModel, reply, tool_call
from suites.search.build import build_suite, page_texts
from suites.search.tasks import all_tasks

SUITE = Path(__file__).resolve().parents[3] / "datasets" / "search"


def test_the_bundled_suite_is_complete_and_its_labels_hold() -> None:
    suite = load_dataset(SUITE)
    assert len(suite.tasks) >= 12
    items = [item for t in suite.trajectories.values() for item in t.items]
    wrong = sum(item.label == "FAIL" for item in items)
    assert 0.35 <= wrong / len(items) <= 0.65  # about half the claims are wrong
    texts = page_texts()
    for trajectory in suite.trajectories.values():
        assert trajectory.label is not None
        all_pass = all(item.label == "PASS" for item in trajectory.items)
        assert (trajectory.label.value == "PASS") == all_pass
        opened = {step.observation.url for step in trajectory.steps if step.observation}
        for item in trajectory.items:
            # A claim whose source was never captured cannot be right.
            if any(source not in texts for source in item.sources):
                assert item.label == "FAIL"
            # A right claim cites pages the agent actually opened.
            if item.label == "PASS":
                assert set(item.sources) <= opened
    flaws: set[object] = set()
    for trajectory in suite.trajectories.values():
        listed = trajectory.metadata.get("flaws", [])
        assert isinstance(listed, list)
        flaws.update(listed)
    assert {"outdated-page", "wrong-row", "wrong-entity", "hallucinated-source"} <= flaws


@pytest.mark.slow
async def test_rebuilding_gives_the_same_bytes(tmp_path: Path) -> None:
    manifest = load_dataset(SUITE).manifest
    assert manifest is not None
    report = await build_suite(tmp_path, all_tasks(), description=manifest.description)
    assert report.problems == []
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    bundled = sorted(p.relative_to(SUITE) for p in SUITE.rglob("*") if p.is_file())
    assert built == bundled
    differing = [str(p) for p in built if (tmp_path / p).read_bytes() != (SUITE / p).read_bytes()]
    assert differing == []


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.text for part in message.content if isinstance(part, ContentText))


class SourceChecker:
    """A scripted agent judge: opens the claim's cited page with browser_navigate and passes the
    claim when the page is archived and shows the claim's names and numbers. Naive on purpose:
    it cannot tell an outdated page from a current one."""

    def __call__(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        prompt = _text(next(m for m in messages if isinstance(m, ChatMessageUser)))
        block = prompt.split("# The claim to judge", 1)[1].strip().split("\n\n")[1]
        claim_line = block.splitlines()[0]
        claim, cited = claim_line.split(" (cited: ", 1)
        url = cited.rstrip(")").split(", ")[0]
        results = [m for m in messages if isinstance(m, ChatMessageTool)]
        if not results:
            return reply("", tool_call("browser_navigate", url=url))
        page = _text(results[-1])
        if "Not in the archive" in page:
            return "The cited page was never captured.\n\nResponse: [0]"
        words = re.findall(r"\d[\d,.]*\d|[A-Z][a-z]+(?: [A-Z][a-z]+)*", claim)
        shown = all(word in page for word in words if word not in ("The", "Its"))
        return f"Response: [{1 if shown else 0}]"


@pytest.mark.slow
async def test_a_scripted_agent_judge_browses_the_archive_and_is_scored_per_claim(
    tmp_path: Path,
) -> None:
    suite = load_dataset(SUITE)
    task = "deep-ventra-hometown-mayor"
    chosen = {t.id for t in suite.trajectories.values() if t.task_id == task}
    summary = await judge_dataset(
        SUITE,
        tmp_path,
        model_factory=lambda: ScriptedModel("source-checker", respond=SourceChecker()),
        grid=GridSpec(modes=("agent",), turns=(4,)),
        only=chosen,
    )
    assert summary.problems == []
    records = list(read_records(tmp_path / VERDICTS_FILE).values())
    claims = sum(len(suite.trajectories[t].items) for t in chosen)
    assert len(records) == claims == 6
    for record in records:
        assert record.environment == "browser"
        assert record.scripted
        call = record.verdict.tool_calls[0]
        assert call.name == "browser_navigate"
        assert not call.is_error
    verdicts = {(r.trajectory_id.rsplit("--", 1)[1], r.item_id): r.verdict.verdict for r in records}
    # The made-up source is refused by the archive; the stale town page fools this judge.
    assert verdicts == {
        ("careful", "c1"): "PASS",
        ("careful", "c2"): "PASS",
        ("outdated", "c1"): "PASS",
        ("outdated", "c2"): "PASS",
        ("invented-source", "c1"): "PASS",
        ("invented-source", "c2"): "FAIL",
    }
    predictions = predictions_from_records(records)
    per_claim = build_report(predictions, dataset="search", replicates=50, item_scoring="item")
    overall = per_claim.configs[0].group("overall")
    assert overall is not None
    # Claims: 4 right PASS (tp), the stale mayor judged PASS (fp), the invented source FAIL (tn).
    assert (overall.confusion.tp, overall.confusion.fp, overall.confusion.tn) == (4, 1, 1)
    assert overall.f1 == pytest.approx(8 / 9)
    per_run = build_report(predictions, dataset="search", replicates=50)
    overall = per_run.configs[0].group("overall")
    assert overall is not None
    # Runs: careful tp, outdated fp, invented-source tn.
    assert (overall.confusion.tp, overall.confusion.fp, overall.confusion.tn) == (1, 1, 1)
    assert overall.f1 == pytest.approx(2 / 3)

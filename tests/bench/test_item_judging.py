"""Claims of search answers judged each in its own run or all together, then scored per claim."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.grid_runner import VERDICTS_FILE, GridSpec, judge_dataset, plan_runs, read_records
from bench.results import predictions_from_records
from bench.scoring import build_report
from dataset.store import load_dataset
from judge_agent.model import ChatMessage, ChatMessageUser, ContentText, GenerateConfig, ToolInfo
from judge_agent.providers.mock import Reply, ScriptedModel

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
SEARCH = {
    "search-python3-release-dates--pass",
    "search-python3-release-dates--wrong-year-fail",
}


def _user_text(messages: list[ChatMessage]) -> str:
    user = next(message for message in messages if isinstance(message, ChatMessageUser))
    if isinstance(user.content, str):
        return user.content
    return "\n".join(part.text for part in user.content if isinstance(part, ContentText))


def _true(claim: str) -> bool:
    """The script's knowledge: Python 3.1 did not come out in 2010."""
    return "2010" not in claim


class ClaimChecker:
    """Answers from the claims the prompt lists, and keeps what each prompt showed."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        text = _user_text(messages)
        self.prompts.append(text)
        if "# The claim to judge" in text:
            claim = text.split("# The claim to judge", 1)[1].strip().split("\n\n")[1]
            return f"Response: [{1 if _true(claim) else 0}]"
        listed = re.findall(r"^(\d+)\. (.+)$", text.split("# Claims extracted", 1)[1], re.M)
        lines = [f"Claim {n}: {'PASS' if _true(c) else 'FAIL'}" for n, c in listed]
        overall = "PASS" if all(_true(c) for _, c in listed) else "FAIL"
        return "\n".join(lines) + f"\n\nRESULT: {overall}"


@pytest.mark.parametrize("items", ["each", "together"])
async def test_claims_are_judged_and_scored_one_by_one(tmp_path: Path, items: str) -> None:
    mini = load_dataset(MINI)
    claims = {
        (trajectory_id, item.id): item.label
        for trajectory_id in SEARCH
        for item in mini.trajectories[trajectory_id].items
    }
    script = ClaimChecker()
    summary = await judge_dataset(
        MINI,
        tmp_path,
        model_factory=lambda: ScriptedModel("claims", respond=script),
        grid=GridSpec(modes=("llm",), items=items),
        only=SEARCH,
    )
    assert summary.problems == []
    records = list(read_records(tmp_path / VERDICTS_FILE).values())
    assert len(records) == (len(claims) if items == "each" else len(SEARCH))
    predictions = predictions_from_records(records)
    assert {(p.trajectory_id, p.item_id): p.label for p in predictions} == claims
    # The script is right about every claim, so every claim's verdict is its label.
    assert all(p.verdict == p.label for p in predictions)
    if items == "each":
        for prompt in script.prompts:
            shown = prompt.split("# The claim to judge", 1)[1]
            assert len(re.findall(r"was released on|known as", shown)) == 1
            assert "# Claims extracted" not in prompt
    else:
        assert all("Claim 1: PASS" in prompt for prompt in script.prompts)
        assert all(record.variant == "items=together" for record in records)

    by_claim = build_report(predictions, dataset="mini", replicates=20, item_scoring="item")
    overall = by_claim.configs[0].group("overall")
    assert overall is not None
    assert overall.f1 == 1.0
    assert overall.predictions == len(claims)
    by_run = build_report(predictions, dataset="mini", replicates=20)
    overall = by_run.configs[0].group("overall")
    assert overall is not None
    assert (overall.confusion.tp, overall.confusion.tn) == (1, 1)


async def test_a_claim_left_out_together_is_invalid(tmp_path: Path) -> None:
    def answer(messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig) -> Reply:
        return "Claim 1: PASS\n\nRESULT: PASS"

    await judge_dataset(
        MINI,
        tmp_path,
        model_factory=lambda: ScriptedModel("lazy", respond=answer),
        grid=GridSpec(modes=("llm",), items="together"),
        only={"search-python3-release-dates--pass"},
    )
    (record,) = read_records(tmp_path / VERDICTS_FILE).values()
    assert record.verdict.items == {"c1": "PASS", "c2": "INVALID", "c3": "INVALID", "c4": "INVALID"}
    predictions = predictions_from_records([record])
    assert [p.verdict for p in predictions] == ["PASS", "INVALID", "INVALID", "INVALID"]
    assert predictions[1].error == "no verdict for this claim"


def test_a_labelled_run_with_unlabelled_claims_is_judged_whole() -> None:
    mini = load_dataset(MINI)
    trajectory = mini.trajectories["search-python3-release-dates--pass"]
    unlabelled = [item.model_copy(update={"label": None}) for item in trajectory.items]
    mini.trajectories = {
        trajectory.id: trajectory.model_copy(update={"items": unlabelled}),
        "no-label": trajectory.model_copy(
            update={"id": "no-label", "items": unlabelled, "label": None}
        ),
    }
    planned = plan_runs(mini, GridSpec(modes=("llm",)), "mock/x")
    by_trajectory: dict[str, list[str | None]] = {}
    for run in planned:
        by_trajectory.setdefault(run.trajectory.id, []).append(run.item_id)
    # Scorable only as a whole: one run. Nothing scorable: per claim, as asked.
    assert by_trajectory == {trajectory.id: [None], "no-label": ["c1", "c2", "c3", "c4"]}

"""Baselines on trajectories with claims: one prediction per labelled claim, and cited-sources."""

from __future__ import annotations

from bench.baselines import BASELINES, baseline_predictions
from dataset.actions import ToolCallAction
from dataset.models import ClaimItem, Label, Observation, Step, Task, Trajectory

TASK = Task(
    id="search-t",
    domain="search",
    subdomain="deep",
    instruction="Find two facts.",
    initial_state={"kind": "empty"},
)


def _trajectory() -> Trajectory:
    return Trajectory(
        id="search-t--run",
        task_id=TASK.id,
        agent="policy",
        steps=[
            Step(
                index=1,
                action=ToolCallAction(
                    name="browser_navigate", arguments={"url": "http://wiki.test/a"}
                ),
                observation=Observation(text="page a", url="http://wiki.test/a"),
            ),
            Step(
                index=2,
                action=ToolCallAction(name="browser_click", arguments={"ref": "e3"}),
                observation=Observation(text="page b", url="http://wiki.test/b#top"),
            ),
        ],
        final_response="x",
        label=Label(value="FAIL", source="human"),
        items=[
            ClaimItem(id="i1", text="opened a", label="PASS", sources=["http://wiki.test/a"]),
            ClaimItem(id="i2", text="clicked to b", label="PASS", sources=["http://wiki.test/b"]),
            ClaimItem(id="i3", text="made up", label="FAIL", sources=["http://wiki.test/zzz"]),
            ClaimItem(id="i4", text="no source", label="FAIL"),
            ClaimItem(id="i5", text="unlabelled", sources=["http://wiki.test/a"]),
        ],
    )


def test_each_labelled_claim_gets_one_prediction_per_baseline() -> None:
    trajectory = _trajectory()
    predictions = baseline_predictions({trajectory.id: trajectory}, {TASK.id: TASK})
    names = set(BASELINES) - {"verifier"}
    assert {p.config.name for p in predictions} == names
    for name in names:
        mine = [p for p in predictions if p.config.name == name]
        assert [(p.item_id, p.label) for p in mine] == [
            ("i1", "PASS"),
            ("i2", "PASS"),
            ("i3", "FAIL"),
            ("i4", "FAIL"),
        ]


def test_cited_sources_passes_claims_whose_sources_were_opened() -> None:
    trajectory = _trajectory()
    predictions = baseline_predictions({trajectory.id: trajectory}, {TASK.id: TASK})
    cited = {p.item_id: p.verdict for p in predictions if p.config.name == "cited-sources"}
    # i2's page was reached by a click: its address comes from the observation (fragment cut).
    assert cited == {"i1": "PASS", "i2": "PASS", "i3": "FAIL", "i4": "FAIL"}


def test_random_is_seeded_per_claim() -> None:
    trajectory = _trajectory()
    many = trajectory.model_copy(
        update={
            "items": [ClaimItem(id=f"c{n}", text=f"claim {n}", label="PASS") for n in range(1, 41)]
        }
    )
    predictions = baseline_predictions({many.id: many}, {TASK.id: TASK})
    coins = [p.verdict for p in predictions if p.config.name == "random"]
    assert len(coins) == 40
    assert 5 < coins.count("PASS") < 35  # per-claim coins, not one coin for the trajectory

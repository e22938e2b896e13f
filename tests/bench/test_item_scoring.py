"""Single-item claims: scored per claim or aggregated per trajectory, against hand counts."""

from __future__ import annotations

import pytest

from bench.item_scoring import aggregate_items
from bench.results import JudgeConfig, Prediction
from bench.scoring import build_report

JUDGE = JudgeConfig(kind="judge", name="agent", turns=16, model="mock/x")

# (trajectory, task, claim, label, verdict). Hand-made so each aggregation has a known answer.
CLAIMS = [
    ("t1", "task-a", "a", "PASS", "PASS"),
    ("t1", "task-a", "b", "PASS", "FAIL"),  # t1: PASS trajectory judged FAIL -> fn
    ("t2", "task-a", "c", "PASS", "PASS"),
    ("t2", "task-a", "d", "FAIL", "PASS"),  # t2: FAIL trajectory judged PASS -> fp
    ("t3", "task-b", "e", "FAIL", "FAIL"),  # t3: tn
    ("t4", "task-b", "f", "PASS", "PASS"),
    ("t4", "task-b", "g", "PASS", "PASS"),  # t4: tp
]


def _claims(rows: list[tuple[str, str, str, str, str]] = CLAIMS) -> list[Prediction]:
    return [
        Prediction(
            config=JUDGE,
            trajectory_id=trajectory,
            item_id=item,
            task_id=task,
            domain="search",
            subdomain="deep",
            label=label,
            verdict=verdict,
            cost_usd=0.5,
            turns_used=2,
            tool_calls=3,
        )
        for trajectory, task, item, label, verdict in rows
    ]


def test_per_item_scoring_counts_every_claim() -> None:
    report = build_report(_claims(), dataset="d", replicates=50, item_scoring="item")
    overall = report.configs[0].group("overall")
    assert overall is not None
    # Claims: tp a c f g = 4, fn b = 1, fp d = 1, tn e = 1.
    assert (overall.confusion.tp, overall.confusion.fp) == (4, 1)
    assert (overall.confusion.tn, overall.confusion.fn) == (1, 1)
    assert overall.f1 == pytest.approx(8 / 10)
    assert overall.accuracy == pytest.approx(5 / 7)
    assert overall.predictions == overall.trajectories == 7  # claims counted as subjects
    assert report.item_scoring == "item"
    assert report.label_counts["overall"] == {"PASS": 5, "FAIL": 2}
    assert any("scored per item" in note for note in report.notes)


def test_per_trajectory_scoring_aggregates_claims_first() -> None:
    report = build_report(_claims(), dataset="d", replicates=50, item_scoring="trajectory")
    overall = report.configs[0].group("overall")
    assert overall is not None
    # Trajectories: t4 tp, t2 fp, t3 tn, t1 fn.
    assert (overall.confusion.tp, overall.confusion.fp) == (1, 1)
    assert (overall.confusion.tn, overall.confusion.fn) == (1, 1)
    assert overall.f1 == pytest.approx(0.5)
    assert overall.accuracy == pytest.approx(0.5)
    assert overall.predictions == overall.trajectories == 4
    assert report.item_scoring == "trajectory"
    assert report.label_counts["overall"] == {"PASS": 2, "FAIL": 2}
    assert any("per trajectory" in note for note in report.notes)


def test_a_merged_prediction_adds_up_its_claims() -> None:
    merged = aggregate_items(_claims(), "trajectory")
    assert [p.trajectory_id for p in merged] == ["t1", "t2", "t3", "t4"]
    t1 = merged[0]
    assert t1.item_id is None
    assert (t1.cost_usd, t1.turns_used, t1.tool_calls) == (1.0, 4, 6)
    assert t1.rationale == "claims: a PASS, b FAIL"


def test_fail_outranks_invalid_and_invalid_outranks_pass() -> None:
    rows = [
        ("t1", "k", "a", "PASS", "INVALID"),
        ("t1", "k", "b", "PASS", "FAIL"),
        ("t2", "k", "c", "PASS", "INVALID"),
        ("t2", "k", "d", "PASS", "PASS"),
    ]
    merged = aggregate_items(_claims(rows), "trajectory")
    assert [p.verdict for p in merged] == ["FAIL", "INVALID"]
    report = build_report(_claims(rows), dataset="d", replicates=50)
    overall = report.configs[0].group("overall")
    assert overall is not None
    assert overall.confusion.invalid_on_pass == 1
    assert overall.confusion.fn == 2


def test_whole_trajectory_predictions_pass_through_and_report_names_no_aggregation() -> None:
    whole = Prediction(
        config=JUDGE,
        trajectory_id="ds-1",
        task_id="ds",
        domain="ds",
        subdomain="filesystem",
        label="PASS",
        verdict="PASS",
    )
    assert aggregate_items([whole], "trajectory") == [whole]
    report = build_report([whole], dataset="d", replicates=50)
    assert report.item_scoring is None
    assert not any("Claims were scored" in note for note in report.notes)

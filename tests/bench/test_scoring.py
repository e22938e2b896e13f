"""From predictions to the report: groups, improvements, paired tests, curves, tags, ranking."""

from __future__ import annotations

from typing import Any

import pytest

from bench.error_tags import ERROR_TAGS, error_tag
from bench.grid_runner import HARNESS_ERROR_PREFIX
from bench.results import JudgeConfig, Prediction
from bench.scoring import build_report

AGENT = JudgeConfig(kind="judge", name="agent", turns=4, model="mock/x")
AGENT_T1 = JudgeConfig(kind="judge", name="agent", turns=1, model="mock/x")
LLM = JudgeConfig(kind="judge", name="llm", model="mock/x")
ALWAYS_PASS = JudgeConfig(kind="baseline", name="always-pass")

# Eight trajectories on four tasks, two subdomains; labels alternate PASS, FAIL.
TRAJECTORIES = [
    (f"t{i}", f"task{i // 2}", "filesystem" if i < 4 else "postgres", "PASS" if i % 2 else "FAIL")
    for i in range(8)
]


def _prediction(config: JudgeConfig, index: int, verdict: str, **extra: Any) -> Prediction:
    trajectory, task, subdomain, label = TRAJECTORIES[index]
    fields: dict[str, Any] = {
        "config": config,
        "trajectory_id": trajectory,
        "task_id": task,
        "domain": "ds",
        "subdomain": subdomain,
        "agent": "alpha" if index % 4 < 2 else "beta",
        "label": label,
        "verdict": verdict,
        "key": f"{trajectory}-{config.name}-{config.turns}",
        "tool_calls": 1,
    }
    fields.update(extra)
    return Prediction(**fields)


def _perfect(config: JudgeConfig) -> list[Prediction]:
    return [_prediction(config, i, TRAJECTORIES[i][3]) for i in range(8)]


def _llm() -> list[Prediction]:
    # Right on t0..t3; on t4..t7 says PASS to everything: t4 and t6 (FAIL) become FP.
    return [
        _prediction(LLM, i, TRAJECTORIES[i][3] if i < 4 else "PASS", tool_calls=0) for i in range(8)
    ]


def test_groups_are_subdomains_domains_then_overall() -> None:
    report = build_report(_perfect(AGENT), dataset="d", replicates=200)
    assert report.groups == ["filesystem", "postgres", "ds", "overall"]
    assert report.group_levels["ds"] == "domain"
    assert report.label_counts["filesystem"] == {"PASS": 2, "FAIL": 2}
    assert report.label_counts["overall"] == {"PASS": 4, "FAIL": 4}


def test_group_scores_match_hand_counts() -> None:
    report = build_report(_llm(), dataset="d", replicates=200)
    (scores,) = report.configs
    postgres = scores.group("postgres")
    assert postgres is not None
    # postgres: t5, t7 PASS judged PASS (tp=2); t4, t6 FAIL judged PASS (fp=2).
    assert (postgres.confusion.tp, postgres.confusion.fp) == (2, 2)
    assert (postgres.confusion.tn, postgres.confusion.fn) == (0, 0)
    assert postgres.f1 == pytest.approx(2 * 2 / (2 * 2 + 2))
    assert postgres.fpr == 1.0
    overall = scores.group("overall")
    assert overall is not None
    # overall: tp=4, fp=2, tn=2, fn=0 -> F1 = 8/10, accuracy 6/8, balanced (1 + 0.5) / 2.
    assert overall.f1 == pytest.approx(0.8)
    assert overall.accuracy == pytest.approx(0.75)
    assert overall.balanced_accuracy == pytest.approx(0.75)
    assert overall.f1_interval is not None
    assert overall.f1_interval.low <= 0.8 <= overall.f1_interval.high


def test_improvement_rows_pair_agent_with_llm_of_the_same_model() -> None:
    predictions = _perfect(AGENT) + _llm() + _perfect(ALWAYS_PASS)
    report = build_report(predictions, dataset="d", replicates=300)
    (row,) = report.improvements
    assert row.agent == AGENT
    assert row.llm == LLM
    assert row.delta_f1["filesystem"] == pytest.approx(0.0)
    assert row.delta_f1["postgres"] == pytest.approx(1.0 - 4 / 6)
    assert row.delta_f1["overall"] == pytest.approx(1.0 - 0.8)
    paired = row.paired
    assert paired.pairs == 8
    assert (paired.agent_only_correct, paired.llm_only_correct) == (2, 0)
    assert paired.mcnemar_p == pytest.approx(0.5)  # 2 of 2 discordant: 2 * (1/4)
    assert paired.delta_f1 == pytest.approx(0.2)
    # Configs: judges first (agent before llm), then baselines.
    assert [c.config for c in report.configs] == [AGENT, LLM, ALWAYS_PASS]


def test_curves_follow_the_turn_budget() -> None:
    half_right = [
        _prediction(AGENT_T1, i, "PASS" if i < 4 else TRAJECTORIES[i][3]) for i in range(8)
    ]
    report = build_report(half_right + _perfect(AGENT), dataset="d", replicates=200)
    (curve,) = report.curves
    assert [point.turns for point in curve.points] == [1, 4]
    assert curve.points[1].f1 == pytest.approx(1.0)
    # T=1: tp=4, fp=2 (t0, t2), fn=0 -> 8/10.
    assert curve.points[0].f1 == pytest.approx(0.8)
    assert len(report.improvements) == 0  # no llm configuration to compare with


def test_runs_give_avg_at_k_and_wrong_verdicts_link_transcripts() -> None:
    run1 = _perfect(AGENT)
    run2 = [p.model_copy(update={"run": 2}) for p in _llm()]
    run2 = [p.model_copy(update={"config": AGENT, "tool_calls": 1}) for p in run2]
    report = build_report(run1 + run2, dataset="d", replicates=200)
    overall = report.configs[0].group("overall")
    assert overall is not None
    assert overall.f1_runs is not None
    assert overall.f1_runs.runs == 2
    assert overall.f1_runs.mean == pytest.approx((1.0 + 0.8) / 2)
    assert len(report.wrong_verdicts) == 2
    wrong = report.wrong_verdicts[0]
    assert wrong.transcript == f"logs/{run2[4].key}.jsonl"
    assert wrong.tag == "needs review"
    assert report.error_tag_totals == {"needs review": 2}


def test_ranking_fidelity_compares_agents() -> None:
    report = build_report(_llm(), dataset="d", replicates=200)
    ranking = report.configs[0].ranking
    assert ranking is not None
    assert ranking.agents == ["alpha", "beta"]
    assert ranking.label_rates == [0.5, 0.5]
    # alpha: t0, t1, t4, t5 -> judged PASS on t1, t4, t5; beta: t2, t3, t6, t7 -> t3, t6, t7.
    assert ranking.judged_rates == [0.75, 0.75]
    assert ranking.mae == pytest.approx(0.25)
    assert ranking.spearman_rho is None  # constant rates


def test_report_is_reproducible() -> None:
    predictions = _perfect(AGENT) + _llm()
    first = build_report(predictions, dataset="d", replicates=300)
    second = build_report(list(reversed(predictions)), dataset="d", replicates=300)
    assert first.model_dump(exclude={"generated_at"}) == second.model_dump(exclude={"generated_at"})


def test_scripted_predictions_add_a_note() -> None:
    scripted = [p.model_copy(update={"scripted": True}) for p in _perfect(AGENT)]
    report = build_report(scripted, dataset="d", replicates=100)
    assert report.configs[0].scripted
    assert any("not judge results" in note for note in report.notes)


@pytest.mark.parametrize(
    ("extra", "tag"),
    [
        ({"verdict": "INVALID", "error": f"{HARNESS_ERROR_PREFIX}OSError: gone"}, "harness error"),
        ({"verdict": "INVALID", "stop_reason": "token_limit"}, "budget exhausted"),
        ({"stop_reason": "turn_limit"}, "budget exhausted"),
        ({"verdict": "INVALID", "error": "model: 500"}, "invalid verdict"),
        ({"tool_calls": 0}, "no tool call"),
        ({"tool_errors": 1}, "tool error"),
        ({}, "needs review"),
    ],
)
def test_error_tags(extra: dict[str, Any], tag: str) -> None:
    fields = {"verdict": "PASS", **extra}  # t0 is labelled FAIL, so PASS is wrong
    prediction = _prediction(AGENT, 0, **fields)
    assert error_tag(prediction) == tag
    assert tag in ERROR_TAGS


def test_right_verdicts_baselines_and_llm_tool_use() -> None:
    assert error_tag(_prediction(AGENT, 0, "FAIL")) is None
    assert error_tag(_prediction(ALWAYS_PASS, 0, "PASS", tool_calls=0)) is None
    # An llm judge has no tools, so no tool call is not its error.
    assert error_tag(_prediction(LLM, 0, "PASS", tool_calls=0)) == "needs review"

"""``agentjudge judge`` end to end on the DS suite, as separate processes.

* With no model configured: replay, verifier check and baselines run, the configuration hint is
  printed, the exit code is 0, and the HTML report renders in headless Chromium with every table
  and plot (the screenshot is saved under ``test-output/bench/``).
* With the scripted model (``mock/coin``), a 2-mode x 3-budget x 2-run grid is killed with
  SIGKILL midway, resumed, and compared with an uninterrupted run: no run lost, none duplicated,
  the same report.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bench.baselines import BASELINES
from bench.grid_runner import GridSpec, JudgeRecord, plan_runs, read_records
from bench.scores import BenchReport
from dataset.store import load_dataset
from tests.bench.chromium import render_in_chromium

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DS = REPO / "datasets" / "ds"
SCREENSHOTS = REPO / "test-output" / "bench"
GRID = ["--mode", "agent,llm", "--turns", "1,2,4", "--runs", "2"]
SUBSET_TASKS = (
    "fs-api-usage",
    "fs-duplicates",
    "fs-letters",
    "fs-photo-sort",
    "pg-clinic-doctor-rls",
    "pg-clinic-lab-results",
    "pg-retail-monthly-revenue",
    "pg-retail-support-role",
)


def _environment() -> dict[str, str]:
    """The test process's environment without any model configuration."""
    names = ("JUDGE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY")
    environment = {key: value for key, value in os.environ.items() if key not in names}
    environment["COLUMNS"] = "200"
    return environment


def _judge(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "agentjudge", "judge", *arguments]


def _report(folder: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((folder / "report.json").read_text())
    data.pop("generated_at")
    return data


async def test_without_a_model_the_baselines_report_renders(tmp_path: Path) -> None:
    output, replays = tmp_path / "judge", tmp_path / "replay"
    command = _judge(str(DS), "--turns", "16", "--output", str(output))
    command += ["--replay-output", str(replays)]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        check=False,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No judge model is configured" in done.stdout
    assert "MODEL=openai/" in done.stdout
    assert "OPENAI_BASE_URL" in done.stdout
    # Every baseline but cited-sources, which runs only on trajectories with claims (search).
    expected = [name for name in BASELINES if name != "cited-sources"]
    for name in expected:
        assert f"baseline: {name}" in done.stdout
    assert "baseline: cited-sources" not in done.stdout
    assert not (output / "verdicts.jsonl").exists()

    report = BenchReport.model_validate_json((output / "report.json").read_text())
    assert [c.config.name for c in report.configs] == expected
    dataset = load_dataset(DS)
    overall = {c.config.name: c.group("overall") for c in report.configs}
    # The suite's labels come from its verifiers, so the verifier baseline agrees with all.
    verifier = overall["verifier"]
    assert verifier is not None
    assert verifier.accuracy == 1.0
    assert verifier.trajectories == len(dataset.trajectories)
    always_pass = overall["always-pass"]
    assert always_pass is not None
    assert always_pass.recall == 1.0
    assert always_pass.fpr == 1.0
    assert any("No judge model was configured" in note for note in report.notes)

    page = await render_in_chromium(output / "report.html", SCREENSHOTS / "no-model-report.png")
    print(f"screenshot: {page.screenshot}")
    assert page.screenshot.stat().st_size > 10_000
    assert page.table_rows["main-table"] == len(expected)
    assert page.table_rows["detailed-metrics"] == len(expected)
    assert page.table_rows["label-counts"] == len(report.groups)
    for table in ("paired-tests", "ranking", "error-tags", "wrong-verdicts"):
        # Sections without data still appear and say why.
        assert table in page.table_rows or table.replace("-", " ") in page.text.lower()
    for plot in ("plot-f1-vs-turns", "plot-confusion", "plot-cost-vs-f1"):
        size = page.images[plot]
        assert size.width > 200, plot
        assert size.height > 100, plot
    assert "No judge model was configured" in page.text


def _subset(root: Path) -> Path:
    """The DS suite cut down to eight tasks (four per subdomain) and their trajectories."""
    (root / "tasks").mkdir(parents=True)
    (root / "trajectories").mkdir()
    shutil.copy(DS / "dataset.json", root / "dataset.json")
    shutil.copytree(DS / "assets", root / "assets")  # the seeds the tasks share
    for task in SUBSET_TASKS:
        shutil.copytree(DS / "tasks" / task, root / "tasks" / task)
    for path in (DS / "trajectories").glob("*.json"):
        if json.loads(path.read_text())["task_id"] in SUBSET_TASKS:
            shutil.copy(path, root / "trajectories" / path.name)
            pictures = path.with_suffix("")
            if pictures.is_dir():
                shutil.copytree(pictures, root / "trajectories" / pictures.name)
    return root


def _valid_lines(path: Path) -> list[JudgeRecord]:
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(JudgeRecord.model_validate_json(line))
        except ValueError:
            continue  # a line torn by the kill
    return records


def test_a_killed_grid_resumes_without_losing_or_repeating_runs(tmp_path: Path) -> None:
    dataset = _subset(tmp_path / "subset")
    planned = plan_runs(
        load_dataset(dataset),
        GridSpec(modes=("agent", "llm"), turns=(1, 2, 4), runs=2),
        "mock/coin",
    )
    assert len(planned) == len(load_dataset(dataset).trajectories) * (3 + 1) * 2

    def command(output: Path) -> list[str]:
        return _judge(
            str(dataset),
            "--model",
            "mock/coin",
            *GRID,
            "--jobs",
            "6",
            "--output",
            str(output),
            "--replay-output",
            str(tmp_path / f"replay-{output.name}"),
        )

    whole = tmp_path / "whole"
    done = subprocess.run(
        command(whole), check=False, env=_environment(), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    resumed = tmp_path / "resumed"
    process = subprocess.Popen(
        command(resumed),
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    verdicts = resumed / "verdicts.jsonl"
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if verdicts.exists() and len(verdicts.read_text().splitlines()) >= len(planned) // 3:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = _valid_lines(verdicts)
    assert 0 < len(before) < len(planned)

    again = subprocess.run(
        command(resumed),
        check=False,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"{len(before)} reused" in again.stdout

    after = _valid_lines(verdicts)
    counts = Counter(record.key for record in after)
    assert max(counts.values()) == 1, "a run was judged twice"
    assert set(counts) == {run.key for run in planned}, "a run was lost"
    # Every run recorded before the kill was kept, not redone.
    assert [r.key for r in after[: len(before)]] == [r.key for r in before]
    reference = read_records(whole / "verdicts.jsonl")
    assert {k: r.verdict.verdict for k, r in read_records(verdicts).items()} == {
        k: r.verdict.verdict for k, r in reference.items()
    }
    assert _report(resumed) == _report(whole)
    report = BenchReport.model_validate_json((whole / "report.json").read_text())
    assert {curve.family for curve in report.curves} == {"agent mock/coin"}
    assert [point.turns for point in report.curves[0].points] == [1, 2, 4]
    assert len(report.improvements) == 3  # agent at each budget vs llm
    assert all(row.paired.pairs == len(planned) // 8 * 2 for row in report.improvements)

"""The MCPMark page's commands (docs/import/mcpmark.md) on the real sample: import, validate,
replay.

``../shared/mcpmark-sample`` holds 15 real runs (five Postgres tasks through three server
implementations). Imported with its tasks and environments, every run must replay faithfully or
differ only in what the agent was shown, on the embedded and the Docker backend, and the task's
verifier must agree with every label whose recorded verification did not crash. Skips, saying
why, when the sample is not next to the repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from tests.mcp_servers.sql.mcpmark_sample import SAMPLE, needs_sample

pytestmark = [needs_sample, pytest.mark.slow]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readme") / "mcpmark-sample"
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mcpmark",
            str(SAMPLE / "runs"),
            str(root),
            "--tasks-root",
            str(SAMPLE / "tasks"),
            "--environments-root",
            str(SAMPLE / "environments"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "imported 15 trajectory(ies) of 5 task(s)" in result.output
    assert "(insforge 5, postgres-mcp 5, supabase 5)" in result.output
    validated = CliRunner().invoke(app, ["datasets", "validate", str(root)])
    assert validated.exit_code == 0, validated.output
    return root


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_every_run_replays_faithfully_or_differs_only_in_presentation(
    imported: Path, tmp_path: Path, backend: str
) -> None:
    output = tmp_path / "replay"
    result = CliRunner().invoke(
        app, ["replay", str(imported), "--backend", backend, "--output", str(output)]
    )
    assert result.exit_code in (0, 1), result.output  # 1: some replay diverged
    reports = [json.loads(line) for line in (output / "fidelity.jsonl").read_text().splitlines()]
    assert len(reports) == 15
    for report in reports:
        name = report["trajectory_id"]
        assert report["verdict"] in ("faithful", "diverged"), (name, report["problems"])
        if report["verdict"] == "diverged":
            assert report["divergence"] == "presentation", name
            differing = [step for step in report["steps"] if step["status"] != "match"]
            assert {step["effect"] for step in differing} == {"presentation"}, name
        check = report["verifier"]
        assert check is not None, name
        assert check["replayed"]["errored"] is False, (name, check["replayed"]["output"])
        if check["recorded_crash"] is None:
            assert check["agrees"] is True, (name, check["explanation"])
    summary = json.loads((output / "summary.json").read_text())["total"]
    assert summary["diverged"] == summary["diverged_presentation"]
    # The chinook runs, which start from a database MCPMark did not have to prepare, and whose
    # servers' collations are known, reproduce every recorded answer.
    chinook = [r for r in reports if "__chinook__" in r["trajectory_id"]]
    assert len(chinook) == 9
    assert all(report["verdict"] == "faithful" for report in chinook)

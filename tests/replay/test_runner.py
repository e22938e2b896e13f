"""Replaying a dataset: the table, problems that do not stop the others, resuming, the CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.store import DatasetNotFoundError, load_dataset
from replay.report import FidelityReport
from replay.runner import REPORT_FILE, SUMMARY_FILE, ReplaySummary, read_reports, replay_dataset
from sandboxes.base import Sandbox
from tests.replay.builders import FS_TASK, MINI, PG_TASK, build_dataset, steps, trajectory

ROOT = "${SANDBOX_ROOT}"
PASS_ID = "fs-meeting-notes-index--sonnet-pass"
PG_PASS_ID = "pg-active-customers-view--sonnet-pass"


def fixture_dataset(root: Path) -> Path:
    mini_pass = json.loads((MINI / "trajectories" / f"{PASS_ID}.json").read_text())
    diverging = trajectory(
        "fs-diverging",
        FS_TASK,
        steps(("read_text_file", {"path": f"{ROOT}/README.txt"}, "not what the file says")),
        label="FAIL",
    )
    unknown_tool = trajectory(
        "fs-unknown-tool", FS_TASK, steps(("format_disk", {"path": ROOT}, "ok")), label="FAIL"
    )
    build_dataset(root, [diverging, unknown_tool], (FS_TASK,))
    (root / "trajectories" / f"{PASS_ID}.json").write_text(json.dumps(mini_pass))
    (root / "trajectories" / "broken-json.json").write_text('{"id": "broken-json", "steps": [')
    orphan = json.loads((root / "trajectories" / "fs-diverging.json").read_text())
    orphan.update(id="orphan", task_id="no-such-task")
    (root / "trajectories" / "orphan.json").write_text(json.dumps(orphan))
    return root


async def test_a_dataset_replays_with_a_table_and_named_problems(tmp_path: Path) -> None:
    root = fixture_dataset(tmp_path / "ds")
    seen: list[FidelityReport] = []
    summary = await replay_dataset(root, tmp_path / "out", jobs=2, on_report=seen.append)
    assert len(seen) == 3
    (row,) = summary.rows
    assert (row.domain, row.subdomain) == ("ds", "filesystem")
    assert (row.trajectories, row.faithful, row.diverged, row.failed) == (3, 1, 1, 1)
    assert (row.verifier_checked, row.verifier_agrees) == (3, 3)
    problems = "\n".join(summary.problems)
    assert "trajectories/broken-json.json" in problems
    assert "no-such-task" in problems
    assert "trajectories/fs-unknown-tool.json: step 1" in problems
    lines = (tmp_path / "out" / REPORT_FILE).read_text().splitlines()
    assert sorted(json.loads(line)["trajectory_id"] for line in lines) == sorted(
        [PASS_ID, "fs-diverging", "fs-unknown-tool"]
    )
    written = ReplaySummary.model_validate_json((tmp_path / "out" / SUMMARY_FILE).read_text())
    assert written.total.trajectories == 3


async def test_a_second_run_resumes_and_a_changed_file_is_replayed_again(tmp_path: Path) -> None:
    root = fixture_dataset(tmp_path / "ds")
    output = tmp_path / "out"
    await replay_dataset(root, output, jobs=2)
    seen: list[FidelityReport] = []
    again = await replay_dataset(root, output, jobs=2, on_report=seen.append)
    assert again.resumed == 3
    assert seen == []
    assert again.total.faithful == 1
    # A torn last line (a kill mid-write) is ignored, and only changed files replay again.
    with (output / REPORT_FILE).open("a") as handle:
        handle.write('{"trajectory_id": "fs-div')
    changed = json.loads((root / "trajectories" / "fs-diverging.json").read_text())
    changed["steps"][0]["observation"]["text"] = (
        MINI / "tasks" / FS_TASK / "initial" / "README.txt"
    ).read_text()
    (root / "trajectories" / "fs-diverging.json").write_text(json.dumps(changed))
    third = await replay_dataset(root, output, jobs=2, on_report=seen.append)
    assert [report.trajectory_id for report in seen] == ["fs-diverging"]
    assert third.resumed == 2
    assert third.total.faithful == 2
    fresh = await replay_dataset(root, output, jobs=1, fresh=True)
    assert fresh.resumed == 0


async def test_a_report_whose_sandbox_never_got_ready_is_replayed_again(tmp_path: Path) -> None:
    root = fixture_dataset(tmp_path / "ds")
    output = tmp_path / "out"
    await replay_dataset(root, output, jobs=2)
    # As an earlier run writes it when the sandbox was made but never got ready (a desktop
    # whose application showed no window): no step ran, and it says nothing of the trajectory.
    earlier = read_reports(output / REPORT_FILE)[PASS_ID]
    unready = earlier.model_copy(
        update={"verdict": "failed", "steps": [], "verifier": None, "not_ready": True}
    )
    with (output / REPORT_FILE).open("a") as handle:
        handle.write(unready.model_dump_json() + "\n")
    seen: list[FidelityReport] = []
    again = await replay_dataset(root, output, jobs=2, on_report=seen.append)
    assert [report.trajectory_id for report in seen] == [PASS_ID]
    assert again.resumed == 2
    assert (again.total.faithful, again.total.failed) == (1, 1)  # fs-unknown-tool still fails
    assert read_reports(output / REPORT_FILE)[PASS_ID].not_ready is False


def test_the_replay_command_prints_the_table_and_exits_nonzero_on_divergence(
    tmp_path: Path,
) -> None:
    root = fixture_dataset(tmp_path / "ds")
    result = CliRunner().invoke(app, ["replay", str(root), "--output", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output
    assert "ds/filesystem" in result.output
    assert "faithful" in result.output
    assert "trajectories/broken-json.json" in result.output
    assert (tmp_path / "o" / SUMMARY_FILE).exists()


@pytest.mark.slow
@pytest.mark.desktop
def test_the_bundled_example_replays_cleanly(tmp_path: Path) -> None:
    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    result = CliRunner().invoke(app, ["replay", str(copy), "--output", str(tmp_path / "o")])
    # The example's GUI runs have hand-drawn screens, which a real desktop never shows: replay
    # performs their actions and reports the screens as drifted (exit 1). The rest is clean.
    assert result.exit_code == 1, result.output
    summary = ReplaySummary.model_validate_json((tmp_path / "o" / SUMMARY_FILE).read_text())
    by_name = {f"{row.domain}/{row.subdomain}": row for row in summary.rows}
    assert by_name["ds/filesystem"].faithful == 2
    assert by_name["ds/postgres"].faithful == 2
    assert by_name["gui/word"].trajectories == 2
    assert by_name["gui/word"].unsupported == 0
    assert by_name["gui/word"].diverged == 2
    assert summary.total.verifier_agrees == summary.total.verifier_checked == 4
    assert summary.total.unsupported == 4  # mobile and search have no replay yet


async def test_imported_mcpmark_runs_replay_and_hand_made_outputs_are_caught(
    tmp_path: Path,
) -> None:
    from dataset.importers.mcpmark import import_mcpmark

    fixtures = Path(__file__).parents[1] / "fixtures" / "mcpmark"
    root = tmp_path / "imported"
    import_mcpmark(
        [fixtures / "results"],
        root,
        tasks_root=fixtures / "tasks",
        environments_root=fixtures / "environments",
    )
    summary = await replay_dataset(root, tmp_path / "out", jobs=2)
    reports: dict[str, FidelityReport] = {}
    for line in (tmp_path / "out" / REPORT_FILE).read_text().splitlines():
        report = FidelityReport.model_validate_json(line)
        # ids read <service>__<category>__<task>__<model>__<exp>__run-N
        parts = report.trajectory_id.split("__")
        reports[f"{parts[2]}#{parts[-1].removeprefix('run-')}"] = report
    # Filesystem runs: absolute backup paths were rewritten on import, so they replay exactly.
    for key in ("rename_drafts#1", "merge_todo_lists#1", "merge_todo_lists#2"):
        assert reports[key].verdict == "faithful", reports[key].steps
    assert summary.rows[0].verifier_agrees == summary.rows[0].verifier_checked == 2
    # The Postgres fixture's outputs were written by hand in a simplified shape: replay must
    # point at exactly those steps, not at the SQL queries that were recorded faithfully.
    bookshop = reports["top_customers#1"]
    assert bookshop.verdict == "diverged"
    assert bookshop.diverged_steps == [1, 3]
    assert {step.tool for step in bookshop.steps if step.status == "diverged"} == {
        "list_schemas",
        "get_object_details",
    }
    # A run whose initial database was not available cannot be replayed (no fault of the
    # replay: counted as not replayable), and says why.
    payroll = reports["raise_salaries#1"]
    assert payroll.verdict == "unsupported"
    assert any(
        "cannot replay" in problem and "external state" in problem for problem in payroll.problems
    )


async def test_replay_into_an_external_server_given_by_dsn(tmp_path: Path) -> None:
    from environments.backends import BackendChoice
    from sandboxes.postgres.embedded import EmbeddedPostgresCluster

    server = EmbeddedPostgresCluster()  # stands for any server the user already runs
    await server.start()
    try:
        root = tmp_path / "ds"
        recorded = load_dataset(MINI).trajectories[PG_PASS_ID]
        build_dataset(root, [recorded], (PG_TASK,))
        choice = BackendChoice.for_backend("local", endpoints={"postgres": server.admin.dsn})
        assert choice.label("postgres") == "external"
        summary = await replay_dataset(root, tmp_path / "out", choice=choice)
        assert (summary.total.faithful, summary.total.verifier_agrees) == (1, 1)
        report = read_reports(tmp_path / "out" / REPORT_FILE)[PG_PASS_ID]
        assert report.backend == "external"
        # Nothing of the replay is left in the user's server.
        import asyncpg

        connection = await asyncpg.connect(server.admin.dsn)
        try:
            names = await connection.fetch("SELECT datname FROM pg_database")
        finally:
            await connection.close()
        assert not [row["datname"] for row in names if row["datname"].startswith("aj_")]
    finally:
        await server.stop()


async def test_a_missing_dataset_is_named_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match=f"{tmp_path / 'nowhere'}: no such dataset"):
        await replay_dataset(tmp_path / "nowhere", tmp_path / "out")
    assert not (tmp_path / "out").exists()


async def test_a_name_that_is_not_utf8_fails_its_trajectory_once(tmp_path: Path) -> None:
    root = fixture_dataset(tmp_path / "ds")
    tree = os.fsencode(root / "tasks" / FS_TASK / "initial")
    with open(os.path.join(tree, b"\xff\xfe.txt"), "wb") as handle:
        handle.write(b"x")
    output = tmp_path / "out"
    first = await replay_dataset(root, output, jobs=2)
    assert first.total.failed == 3  # every trajectory of the task, none crashed
    reports = read_reports(output / REPORT_FILE)
    assert len(reports) == 3
    for report in reports.values():
        assert report.verdict == "failed"
        assert any(
            f"task {FS_TASK}" in problem and repr(b"\xff\xfe.txt") in problem
            for problem in report.problems
        ), report.problems
    seen: list[FidelityReport] = []
    again = await replay_dataset(root, output, jobs=2, on_report=seen.append)
    assert seen == []  # recorded once: the rerun replays none of them again
    assert again.resumed == 3
    assert len((output / REPORT_FILE).read_text().splitlines()) == 3


async def test_a_verifier_linked_outside_its_task_is_never_run(tmp_path: Path) -> None:
    root = fixture_dataset(tmp_path / "ds")
    marker = tmp_path / "ran"
    outside = tmp_path / "elsewhere" / "verify.py"
    outside.parent.mkdir()
    outside.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    verifier = root / "tasks" / FS_TASK / "verify.py"
    verifier.unlink()
    verifier.symlink_to(outside)
    summary = await replay_dataset(root, tmp_path / "out", jobs=2)
    assert summary.total.trajectories == 0  # the task is refused, so none of its replays run
    problems = "\n".join(summary.problems)
    assert f"tasks/{FS_TASK}/verify.py, which is a symbolic link to {outside}" in problems
    assert not marker.exists()


@pytest.mark.parametrize(
    "update",
    [
        {"verdict": "failed", "steps": [], "verifier": None, "infrastructure": True},
        {"attempts": 2, "first_verdict": "diverged", "first_diverged_steps": [1]},
    ],
    ids=["sandbox-could-not-be-made", "diverged-only-once"],
)
async def test_reports_that_say_little_of_the_trajectory_are_replayed_again(
    tmp_path: Path, update: dict[str, object]
) -> None:
    root = fixture_dataset(tmp_path / "ds")
    output = tmp_path / "out"
    await replay_dataset(root, output, jobs=2)
    earlier = read_reports(output / REPORT_FILE)[PASS_ID]
    assert earlier.verdict == "faithful"
    with (output / REPORT_FILE).open("a") as handle:
        handle.write(earlier.model_copy(update=update).model_dump_json() + "\n")
    seen: list[FidelityReport] = []
    again = await replay_dataset(root, output, jobs=2, on_report=seen.append)
    assert [report.trajectory_id for report in seen] == [PASS_ID]
    assert again.resumed == 2
    assert again.resumed_not_faithful == 2  # fs-diverging and fs-unknown-tool, reused
    assert read_reports(output / REPORT_FILE)[PASS_ID].attempts == 1


async def test_auto_jobs_are_sized_from_the_kinds_replayed(tmp_path: Path) -> None:
    from environments.capacity import auto_jobs
    from environments.registry import kind_for_task

    root = fixture_dataset(tmp_path / "ds")
    summary = await replay_dataset(root, tmp_path / "out")
    tasks = load_dataset(root, partial=True).tasks.values()
    needs = [kind.worker_resources for kind in map(kind_for_task, tasks) if kind is not None]
    assert summary.jobs == auto_jobs(needs) >= 1


async def test_fresh_sandboxes_are_made_ahead_only_where_the_provider_prepares_ahead(
    tmp_path: Path,
) -> None:
    # Folders are quick to make: the filesystem provider does not prepare ahead, so however
    # large the pool asked for, nothing is made ahead (desktops: tests/replay/test_replay_ahead).
    root = fixture_dataset(tmp_path / "ds")
    summary = await replay_dataset(root, tmp_path / "out", jobs=1, ahead=3)
    assert summary.total.trajectories == 3
    assert (summary.ahead.size, summary.ahead.prepared) == (0, 0)
    written = ReplaySummary.model_validate_json((tmp_path / "out" / SUMMARY_FILE).read_text())
    assert written.ahead == summary.ahead


async def test_a_sandbox_made_ahead_is_replayed_into_and_always_destroyed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from environments.backends import BackendChoice, ProviderSet
    from replay.engine import initial_sandbox, replay_trajectory

    dataset = load_dataset(MINI)
    item = dataset.trajectories[PASS_ID]
    task = dataset.tasks[item.task_id]
    async with ProviderSet(BackendChoice()) as providers:
        # Not worth making ahead for a provider that does not prepare ahead.
        assert await initial_sandbox(item, task, dataset.task_dir(task.id), providers) is None
        provider = await providers.get("filesystem")
        destroyed: list[str] = []

        async def made() -> Sandbox:
            sandbox = await provider.create(task, dataset.task_dir(task.id))
            destroy = sandbox.destroy

            async def counted() -> None:
                destroyed.append(sandbox.name)
                await destroy()

            monkeypatch.setattr(sandbox, "destroy", counted)
            return sandbox

        first = await made()

        async def refused(*_: object) -> Sandbox:
            raise AssertionError("the replay made its own sandbox")

        monkeypatch.setattr(provider, "create", refused)
        result = await replay_trajectory(
            item, task, dataset.task_dir(task.id), providers, made=first
        )
        assert result.report.verdict == "faithful"  # replayed into the one made ahead
        assert destroyed == [first.name]
        monkeypatch.undo()
        # A trajectory that turns out not to be replayable still destroys what was made for it.
        unsupported = task.model_copy(update={"domain": "no-such-domain"})
        second = await made()
        result = await replay_trajectory(
            item, unsupported, dataset.task_dir(task.id), providers, made=second
        )
        assert result.report.verdict == "unsupported"
        assert destroyed == [first.name, second.name]

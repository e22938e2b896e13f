"""Replaying DS trajectories on every backend: rebuilt state, step comparison, verifier check."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from dataset.actions import AndroidAction
from dataset.models import Step, Trajectory
from dataset.store import Dataset, load_dataset
from environments.backends import ProviderSet
from environments.steps import RecordedStep, StepFidelity
from replay.engine import replay_trajectory
from replay.report import FidelityReport
from sandboxes.base import Sandbox
from sandboxes.filesystem.sandbox import FilesystemSandbox
from sandboxes.postgres.sandbox import PostgresSandbox
from tests.replay.builders import FS_TASK, MINI, PG_TASK, build_dataset, call, steps, trajectory

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = "${SANDBOX_ROOT}"


def mini() -> Dataset:
    return load_dataset(MINI)


async def replay(
    providers: ProviderSet, dataset: Dataset, item: Trajectory, *, keep: bool = False
) -> tuple[FidelityReport, object]:
    task = dataset.tasks[item.task_id]
    result = await replay_trajectory(item, task, dataset.task_dir(task.id), providers, keep=keep)
    return result.report, result.snapshot


@pytest.mark.parametrize(
    "trajectory_id",
    [
        "fs-meeting-notes-index--sonnet-pass",
        "fs-meeting-notes-index--mini-claims-success",
        "pg-active-customers-view--sonnet-pass",
        "pg-active-customers-view--mini-inner-join",
    ],
)
async def test_recorded_runs_replay_faithfully_and_the_verifier_agrees(
    providers: ProviderSet, trajectory_id: str
) -> None:
    dataset = mini()
    report, _ = await replay(providers, dataset, dataset.trajectories[trajectory_id])
    assert report.verdict == "faithful", [step for step in report.steps if step.status != "match"]
    assert all(step.status == "match" for step in report.steps)
    assert report.verifier is not None
    assert report.verifier.agrees is True, report.verifier
    label = dataset.trajectories[trajectory_id].label
    assert label is not None
    assert report.verifier.replayed.passed == (label.value == "PASS")


async def test_every_filesystem_write_tool_rebuilds_the_state(
    providers: ProviderSet, tmp_path: Path
) -> None:
    recorded = steps(
        ("create_directory", {"path": f"{ROOT}/archive/2024"}, None),
        ("write_file", {"path": f"{ROOT}/archive/2024/list.txt", "content": "one\ntwo\n"}, None),
        (
            "edit_file",
            {
                "path": f"{ROOT}/archive/2024/list.txt",
                "edits": [{"oldText": "two", "newText": "TWO"}],
                "dryRun": True,
            },
            None,
        ),
        (
            "edit_file",
            {
                "path": f"{ROOT}/archive/2024/list.txt",
                "edits": [{"oldText": "one", "newText": "ONE"}],
            },
            None,
        ),
        (
            "move_file",
            {"source": f"{ROOT}/README.txt", "destination": f"{ROOT}/archive/README.txt"},
            None,
        ),
        ("read_text_file", {"path": f"{ROOT}/archive/2024/list.txt"}, "ONE\ntwo"),
    )
    item = trajectory("fs-writes", FS_TASK, recorded)
    dataset = build_dataset(tmp_path / "ds", [item], (FS_TASK,))
    report, snapshot = await replay(providers, load_dataset(dataset), item, keep=True)
    assert snapshot is not None
    try:
        assert [step.status for step in report.steps] == ["unrecorded"] * 5 + ["match"]
        assert [step.writes for step in report.steps] == [True, True, True, True, True, False]
        view = await snapshot.clone(writable=False)  # type: ignore[attr-defined]
        assert isinstance(view, FilesystemSandbox)
        assert await view.tree.read_bytes("archive/2024/list.txt") == b"ONE\ntwo\n"
        assert await view.tree.read_bytes("archive/README.txt")
        names = [entry.name for entry in await view.tree.list_directory("")]
        assert "README.txt" not in names
    finally:
        await snapshot.destroy()  # type: ignore[attr-defined]


async def test_a_diverging_step_is_reported_with_a_diff(
    providers: ProviderSet, tmp_path: Path
) -> None:
    recorded = steps(
        ("write_file", {"path": f"{ROOT}/index.md", "content": "real content\n"}, None),
        ("read_text_file", {"path": f"{ROOT}/index.md"}, "what the agent claimed it saw"),
        (
            "list_directory",
            {"path": f"{ROOT}/notes"},
            "[FILE] 2024-03-18-retro.md\n"
            "[FILE] 2024-03-04-kickoff.md\n[FILE] 2024-03-11-design-review.md",
        ),
    )
    item = trajectory("fs-diverges", FS_TASK, recorded, label="PASS")
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (FS_TASK,)))
    report, _ = await replay(providers, dataset, item)
    assert report.verdict == "diverged"
    statuses = [step.status for step in report.steps]
    assert statuses == ["unrecorded", "diverged", "match"]  # listing order is normalised away
    diff = report.steps[1].diff or ""
    assert "-what the agent claimed it saw" in diff
    assert "+real content" in diff
    assert report.verifier is not None
    assert report.verifier.agrees is False  # the index lists no notes: the verifier says FAIL
    assert "diverged at steps [2]" in report.verifier.explanation


async def test_a_wrong_label_on_a_faithful_replay_is_called_out(
    providers: ProviderSet, tmp_path: Path
) -> None:
    original = mini().trajectories["fs-meeting-notes-index--sonnet-pass"]
    item = trajectory(
        "fs-mislabelled",
        FS_TASK,
        original.steps,
        label="FAIL",
        verifier_output="Traceback: PermissionError while reading index.md",
        error_message="verification crashed",
    )
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (FS_TASK,)))
    report, _ = await replay(providers, dataset, item)
    assert report.verdict == "faithful"
    check = report.verifier
    assert check is not None
    assert check.agrees is False
    assert check.replayed.passed
    assert check.recorded_output == "Traceback: PermissionError while reading index.md"
    assert "PASS" in check.replayed.output
    assert "probably wrong" in check.explanation
    assert "verification crashed" in check.explanation


async def test_malformed_steps_are_named_and_the_rest_still_replays(
    providers: ProviderSet, tmp_path: Path
) -> None:
    recorded = [
        *steps(
            ("list_directory", {"path": f"{ROOT}/notes"}, None),
            ("delete_everything", {"path": ROOT}, "done"),
            ("write_file", {"content": "no path given"}, "Successfully wrote"),
            ("read_text_file", {"path": f"{ROOT}/README.txt", "head": "three"}, "x"),
        ),
        Step(index=5, action=AndroidAction(action_type="navigate_home")),
        call(6, "create_directory", {"path": f"{ROOT}/later"}, None),
    ]
    item = trajectory("fs-malformed", FS_TASK, recorded)
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (FS_TASK,)))
    report, _ = await replay(providers, dataset, item)
    assert report.verdict == "failed"
    statuses = [step.status for step in report.steps]
    assert statuses == ["unrecorded", "failed", "failed", "failed", "failed", "unrecorded"]
    file = "trajectories/fs-malformed.json"
    assert any(
        file in problem and "step 2" in problem and "unknown tool 'delete_everything'" in problem
        for problem in report.problems
    )
    assert any(
        file in problem and "steps[2].action.arguments" in problem and "path" in problem
        for problem in report.problems
    )
    assert any("steps[3].action.arguments" in problem for problem in report.problems)
    assert any("android action cannot be replayed" in problem for problem in report.problems)


async def _fetch(sandbox: PostgresSandbox, sql: str) -> list[asyncpg.Record]:
    async with sandbox.connect() as connection:
        return list(await connection.fetch(sql))


async def test_sql_write_tools_of_every_server_commit_one_by_one(
    providers: ProviderSet, tmp_path: Path
) -> None:
    recorded = steps(
        ("execute_sql", {"sql": "CREATE TABLE notes (id int PRIMARY KEY, body text)"}, None),
        ("execute_sql", {"query": "INSERT INTO notes VALUES (1, 'supabase style')"}, None),
        (
            "apply_migration",
            {"name": "add_flag", "query": "ALTER TABLE notes ADD COLUMN flag boolean DEFAULT true"},
            None,
        ),
        ("run-raw-sql", {"query": "INSERT INTO notes VALUES (2, 'insforge style', false)"}, None),
        # Fails on the duplicate key: must not undo the committed calls before it.
        ("execute_sql", {"sql": "INSERT INTO notes VALUES (1, 'duplicate')"}, None),
        (
            "execute_sql",
            {"sql": "SELECT id, body, flag FROM notes ORDER BY id"},
            "[{'id': 1, 'body': 'supabase style', 'flag': True}, "
            "{'id': 2, 'body': 'insforge style', 'flag': False}]",
        ),
    )
    item = trajectory("pg-writes", PG_TASK, recorded)
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (PG_TASK,)))
    report, snapshot = await replay(providers, dataset, item, keep=True)
    assert snapshot is not None
    try:
        assert [step.status for step in report.steps] == ["unrecorded"] * 5 + ["match"]
        assert report.steps[4].replayed_error
        assert all(step.writes for step in report.steps)
        view = await snapshot.clone(writable=False)  # type: ignore[attr-defined]
        assert isinstance(view, PostgresSandbox)
        rows = await _fetch(view, "SELECT id, body FROM notes ORDER BY id")
        assert [tuple(row) for row in rows] == [(1, "supabase style"), (2, "insforge style")]
    finally:
        await snapshot.destroy()  # type: ignore[attr-defined]


async def test_roles_a_replay_creates_are_removed_with_its_sandbox(
    providers: ProviderSet, tmp_path: Path
) -> None:
    recorded = steps(
        ("execute_sql", {"sql": "CREATE ROLE replay_test_analyst NOLOGIN"}, "No results"),
        (
            "execute_sql",
            {"sql": "GRANT SELECT ON customers TO replay_test_analyst"},
            "No results",
        ),
        (
            "execute_sql",
            {"sql": "SELECT rolname FROM pg_roles WHERE rolname = 'replay_test_analyst'"},
            "[{'rolname': 'replay_test_analyst'}]",
        ),
    )
    item = trajectory("pg-role", PG_TASK, recorded)
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (PG_TASK,)))
    report, _ = await replay(providers, dataset, item)
    assert report.verdict == "faithful", report.steps
    # Replaying again only works if the first replay's role is gone (CREATE ROLE would fail).
    again, snapshot = await replay(providers, dataset, item, keep=True)
    assert again.verdict == "faithful", again.steps
    assert snapshot is not None
    view = await snapshot.clone(writable=False)  # type: ignore[attr-defined]
    assert isinstance(view, PostgresSandbox)
    rows = await _fetch(view, "SELECT 1 FROM pg_roles WHERE rolname = 'replay_test_analyst'")
    assert len(rows) == 1  # the frozen state keeps the role it needs
    await snapshot.destroy()  # type: ignore[attr-defined]
    clone_free = await replay(providers, dataset, item)
    assert clone_free[0].verdict == "faithful"  # destroyed with the snapshot, so creatable again


async def test_a_kind_that_raises_on_a_step_fails_that_step_only(
    providers: ProviderSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from environments.filesystem.kind import FilesystemKind

    original = FilesystemKind.replay_step

    async def breaks_on_step_two(
        self: FilesystemKind, sandbox: Sandbox, recorded: RecordedStep
    ) -> StepFidelity:
        if recorded.step.index == 2:
            raise RuntimeError("the kind broke")
        return await original(self, sandbox, recorded)

    monkeypatch.setattr(FilesystemKind, "replay_step", breaks_on_step_two)
    recorded = steps(
        ("create_directory", {"path": f"{ROOT}/a"}, None),
        ("create_directory", {"path": f"{ROOT}/b"}, None),
        ("create_directory", {"path": f"{ROOT}/c"}, None),
    )
    item = trajectory("fs-broken-kind", FS_TASK, recorded)
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (FS_TASK,)))
    report, _ = await replay(providers, dataset, item)
    assert [step.status for step in report.steps] == ["unrecorded", "failed", "unrecorded"]
    assert report.steps[1].message is not None
    assert "steps[1].action" in report.steps[1].message
    assert "RuntimeError: the kind broke" in report.steps[1].message


@pytest.mark.parametrize(
    ("diverging_attempts", "retry", "attempts", "verdict"),
    [
        ({1}, True, 2, "faithful"),  # diverged once: the fresh replay matches
        ({1, 2}, True, 2, "diverged"),  # diverged on both replays
        ({1}, False, 1, "diverged"),  # the kind did not ask: reported at once
    ],
    ids=["once", "twice", "not-asked"],
)
async def test_a_step_the_kind_asks_to_recheck_replays_the_run_once_more_on_a_fresh_sandbox(
    providers: ProviderSet,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    diverging_attempts: set[int],
    retry: bool,
    attempts: int,
    verdict: str,
) -> None:
    from environments.filesystem.kind import FilesystemKind

    original = FilesystemKind.replay_step
    sandboxes: list[Sandbox] = []

    async def flaky_step_two(
        self: FilesystemKind, sandbox: Sandbox, recorded: RecordedStep
    ) -> StepFidelity:
        if sandbox not in sandboxes:
            sandboxes.append(sandbox)
        fidelity = await original(self, sandbox, recorded)
        if recorded.step.index == 2 and len(sandboxes) in diverging_attempts:
            fidelity.status, fidelity.retry = "diverged", retry
        return fidelity

    monkeypatch.setattr(FilesystemKind, "replay_step", flaky_step_two)
    recorded = steps(
        ("create_directory", {"path": f"{ROOT}/a"}, None),
        ("create_directory", {"path": f"{ROOT}/b"}, None),
    )
    item = trajectory("fs-flaky", FS_TASK, recorded)
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (FS_TASK,)))
    report, _ = await replay(providers, dataset, item)
    assert len(sandboxes) == attempts  # each replay on a sandbox of its own
    assert report.attempts == attempts
    assert report.verdict == verdict
    assert len(report.steps) == 2  # the second replay's steps only
    if attempts == 2:
        assert report.first_verdict == "diverged"
        assert report.first_diverged_steps == [2]
        assert report.recheck is not None
        assert "replayed again on a fresh sandbox" in report.recheck
        assert report.diverged_once == (verdict == "faithful")
    else:
        assert report.first_verdict is None
        assert report.recheck is None
        assert not report.diverged_once

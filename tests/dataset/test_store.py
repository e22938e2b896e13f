"""The dataset format on disk: round trips, counts, and reporting every problem at once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dataset.actions import AndroidAction, ToolCallAction
from dataset.models import (
    AppSnapshotState,
    DirectoryTreeState,
    EmptyState,
    Label,
    Observation,
    SqlSeedState,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import DatasetError
from dataset.store import (
    Manifest,
    count_by,
    find_datasets,
    load_dataset,
    write_manifest,
    write_task,
    write_trajectory,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "datasets"
BROKEN = FIXTURES / "broken"


def _write_small_dataset(root: Path) -> tuple[list[Task], list[Trajectory]]:
    write_manifest(root, Manifest(name="small"))
    fs = Task(
        id="fs",
        domain="ds",
        subdomain="filesystem",
        instruction="Write a.txt",
        initial_state=DirectoryTreeState(),
    )
    phone = Task(
        id="phone",
        domain="mobile",
        subdomain="android",
        instruction="Open the clock",
        initial_state=AppSnapshotState(snapshot_name="base"),
    )
    web = Task(
        id="web", domain="search", subdomain="deep", instruction="Find", initial_state=EmptyState()
    )
    for task in (fs, phone, web):
        write_task(root, task)
    (root / "tasks" / "fs" / "initial").mkdir()
    write_call = ToolCallAction(name="write_file", arguments={"path": "${SANDBOX_ROOT}/a.txt"})
    trajectories = [
        Trajectory(
            id="fs-pass",
            task_id="fs",
            agent="a",
            steps=[Step(index=1, action=write_call, observation=Observation(text="ok"))],
            label=Label(value="PASS", source="human"),
        ),
        Trajectory(
            id="fs-fail-1", task_id="fs", agent="a", label=Label(value="FAIL", source="human")
        ),
        Trajectory(
            id="fs-fail-2", task_id="fs", agent="b", label=Label(value="FAIL", source="vote")
        ),
        Trajectory(
            id="phone-pass",
            task_id="phone",
            agent="a",
            steps=[Step(index=1, action=AndroidAction(action_type="open_app", app_name="Clock"))],
            label=Label(value="PASS", source="human"),
        ),
        Trajectory(id="web-unlabelled", task_id="web", agent="a"),
    ]
    for trajectory in trajectories:
        write_trajectory(root, trajectory)
    return [fs, phone, web], trajectories


def test_written_records_load_back_identical(tmp_path: Path) -> None:
    tasks, trajectories = _write_small_dataset(tmp_path)
    loaded = load_dataset(tmp_path)
    assert loaded.errors == []
    assert loaded.manifest == Manifest(name="small")
    assert loaded.tasks == {task.id: task for task in tasks}
    assert loaded.trajectories == {trajectory.id: trajectory for trajectory in trajectories}


def test_counts_per_domain_subdomain_and_label(tmp_path: Path) -> None:
    _write_small_dataset(tmp_path)
    assert count_by(load_dataset(tmp_path)) == [
        ("ds", "filesystem", 1, 2, 0),
        ("mobile", "android", 1, 0, 0),
        ("search", "deep", 0, 0, 1),
    ]


def test_unlabelled_trajectories_are_a_warning_not_an_error(tmp_path: Path) -> None:
    _write_small_dataset(tmp_path)
    loaded = load_dataset(tmp_path)
    warnings = [p for p in loaded.problems if p.severity == "warning"]
    assert [(p.file, p.field) for p in warnings] == [("trajectories/web-unlabelled.json", "label")]


# Every fault planted in the broken fixture, as (file, field); field None means the whole file.
EXPECTED_BROKEN_ERRORS = {
    ("tasks/bad-json/task.json", None),
    ("tasks/escape/task.json", "initial_state.directory_tree.path"),
    ("tasks/id-mismatch/task.json", "id"),
    ("tasks/missing-files/task.json", "initial_state.path"),
    ("tasks/missing-files/task.json", "verifier.path"),
    ("tasks/no-task-file/task.json", None),
    ("tasks/wrong-types/task.json", "domain"),
    ("tasks/wrong-types/task.json", "instruction"),
    ("trajectories/bad-action-params.json", "steps[0].action.computer_13"),
    ("trajectories/bad-action-params.json", "steps[1].action.android"),
    ("trajectories/bad-json.json", None),
    ("trajectories/dangling.json", "task_id"),
    ("trajectories/gaps.json", "steps"),
    ("trajectories/invalid-task.json", "task_id"),
    ("trajectories/missing-screenshot.json", "steps[0].observation.screenshot"),
    ("trajectories/renamed.json", "id"),
    ("trajectories/wrong-types.json", "steps[0].index"),
    ("trajectories/wrong-types.json", "steps[1].action"),
    ("trajectories/wrong-types.json", "label.value"),
}


def test_every_planted_fault_is_reported_with_its_file_and_field() -> None:
    loaded = load_dataset(BROKEN, partial=True)
    reported = {(problem.file, problem.field) for problem in loaded.errors}
    assert reported == EXPECTED_BROKEN_ERRORS
    assert len(loaded.errors) == len(EXPECTED_BROKEN_ERRORS)
    warnings = [(p.file, p.severity) for p in loaded.problems if p.severity == "warning"]
    assert warnings == [("trajectories/notes.txt", "warning")]


def test_problem_messages_say_what_is_wrong() -> None:
    messages = {(p.file, p.field): p.message for p in load_dataset(BROKEN, partial=True).errors}
    assert "line 5 column 1" in messages[("tasks/bad-json/task.json", None)]
    assert (
        "must stay inside its folder"
        in messages[("tasks/escape/task.json", "initial_state.directory_tree.path")]
    )
    assert "'no-such-task' does not exist" in messages[("trajectories/dangling.json", "task_id")]
    assert "'wrong-types' is invalid" in messages[("trajectories/invalid-task.json", "task_id")]
    assert "'desktop'" in messages[("tasks/wrong-types/task.json", "domain")]
    assert (
        "TYPING needs parameter(s) text"
        in messages[("trajectories/bad-action-params.json", "steps[0].action.computer_13")]
    )
    assert (
        "seed.sql, which does not exist"
        in messages[("tasks/missing-files/task.json", "initial_state.path")]
    )


def test_partial_load_keeps_only_the_valid_part() -> None:
    loaded = load_dataset(BROKEN, partial=True)
    assert set(loaded.tasks) == {"good-task"}
    assert set(loaded.trajectories) == {"good-traj"}
    assert loaded.manifest is not None
    assert loaded.manifest.name == "broken"


def test_strict_load_raises_with_all_errors_listed() -> None:
    with pytest.raises(DatasetError) as raised:
        load_dataset(BROKEN)
    assert len([p for p in raised.value.problems if p.severity == "error"]) == len(
        EXPECTED_BROKEN_ERRORS
    )
    text = str(raised.value)
    assert text.startswith(f"{len(EXPECTED_BROKEN_ERRORS)} error(s):")
    assert "trajectories/dangling.json: task_id" in text


def test_a_missing_folder_or_manifest_is_reported(tmp_path: Path) -> None:
    missing = load_dataset(tmp_path / "nowhere", partial=True)
    assert [p.message for p in missing.errors] == [
        "no such dataset folder (the path does not exist)"
    ]
    (tmp_path / "a-file").write_text("")
    not_a_folder = load_dataset(tmp_path / "a-file", partial=True)
    assert [p.message for p in not_a_folder.errors] == [
        "is not a dataset folder (it is a file, not a folder)"
    ]
    empty = load_dataset(tmp_path, partial=True)
    assert {p.file for p in empty.errors} == {"dataset.json", "tasks", "trajectories"}


def test_a_manifest_of_another_format_version_is_refused(tmp_path: Path) -> None:
    shutil.copytree(BROKEN, tmp_path / "d")
    (tmp_path / "d" / "dataset.json").write_text(json.dumps({"format_version": 2, "name": "x"}))
    problems = load_dataset(tmp_path / "d", partial=True).errors
    assert ("dataset.json", "format_version") in {(p.file, p.field) for p in problems}


def test_find_datasets_looks_a_few_levels_down(tmp_path: Path) -> None:
    for relative in ("a", "b/c", "b/c/d/e/f/too-deep"):
        write_manifest(tmp_path / relative, Manifest(name=relative))
    assert find_datasets(tmp_path, tmp_path / "missing") == [
        (tmp_path / "a").resolve(),
        (tmp_path / "b/c").resolve(),
    ]


def test_each_initial_state_kind_checks_the_file_it_names(tmp_path: Path) -> None:
    write_manifest(tmp_path, Manifest(name="states"))
    states = {
        "tree-is-a-file": {"kind": "directory_tree", "path": "initial"},
        "doc-is-a-folder": {"kind": "document", "path": "memo.docx"},
        "snapshot-missing": {"kind": "app_snapshot", "path": "snap.tar"},
        "archive-is-a-folder": {"kind": "page_archive", "path": "pages"},
        "snapshot-by-name": {"kind": "app_snapshot", "snapshot_name": "base"},
    }
    for task_id, state in states.items():
        folder = tmp_path / "tasks" / task_id
        folder.mkdir(parents=True)
        task = {"id": task_id, "domain": "gui", "subdomain": "other", "instruction": "x"}
        (folder / "task.json").write_text(json.dumps(task | {"initial_state": state}))
    (tmp_path / "tasks" / "tree-is-a-file" / "initial").write_text("not a folder")
    (tmp_path / "tasks" / "doc-is-a-folder" / "memo.docx").mkdir()
    (tmp_path / "tasks" / "archive-is-a-folder" / "pages").mkdir()
    (tmp_path / "trajectories").mkdir()
    loaded = load_dataset(tmp_path, partial=True)
    assert {(p.file, p.message.rsplit(", ", 1)[-1]) for p in loaded.errors} == {
        ("tasks/tree-is-a-file/task.json", "which is not a folder"),
        ("tasks/doc-is-a-folder/task.json", "which is not a file"),
        ("tasks/snapshot-missing/task.json", "which does not exist"),
    }
    assert set(loaded.tasks) == {"archive-is-a-folder", "snapshot-by-name"}


MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def _mini_copy(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    shutil.copytree(MINI, root)
    return root


@pytest.mark.parametrize(
    ("task", "name", "field"),
    [
        ("pg-active-customers-view", "verify.py", "verifier.path"),
        ("pg-active-customers-view", "seed.sql", "initial_state.path"),
        ("fs-meeting-notes-index", "initial", "initial_state.path"),
        ("word-memo-q4-update", "memo.docx", "initial_state.path"),
    ],
)
def test_a_named_file_linked_outside_its_task_is_refused(
    tmp_path: Path, task: str, name: str, field: str
) -> None:
    root = _mini_copy(tmp_path)
    named = root / "tasks" / task / name
    outside = tmp_path / "elsewhere" / name
    outside.parent.mkdir()
    named.rename(outside)  # the same content, moved out of the dataset
    named.symlink_to(outside)
    loaded = load_dataset(root, partial=True)
    problems = [p for p in loaded.errors if p.file == f"tasks/{task}/task.json"]
    assert [p.field for p in problems] == [field]
    assert f"{task}/{name}, which is a symbolic link to {outside}" in problems[0].message
    assert f"outside tasks/{task}/" in problems[0].message
    assert task not in loaded.tasks
    # Its trajectories are refused with it, each saying why.
    assert all(t.task_id != task for t in loaded.trajectories.values())


def test_a_link_inside_the_task_folder_is_accepted(tmp_path: Path) -> None:
    root = _mini_copy(tmp_path)
    folder = root / "tasks" / "pg-active-customers-view"
    (folder / "seed.sql").rename(folder / "seed-v2.sql")
    (folder / "seed.sql").symlink_to("seed-v2.sql")
    assert "pg-active-customers-view" in load_dataset(root).tasks


def test_a_link_chain_that_ends_outside_names_its_first_link(tmp_path: Path) -> None:
    root = _mini_copy(tmp_path)
    folder = root / "tasks" / "pg-active-customers-view"
    secret = tmp_path / "secret.py"
    secret.write_text("print('not the dataset')\n")
    (folder / "verify.py").unlink()
    (folder / "hop.py").symlink_to(secret)
    (folder / "verify.py").symlink_to("hop.py")
    [problem] = [p for p in load_dataset(root, partial=True).errors if p.field == "verifier.path"]
    assert f"verify.py, which is a symbolic link to hop.py (which is {secret})" in problem.message


def test_a_task_folder_linked_from_outside_the_dataset_is_refused(tmp_path: Path) -> None:
    root = _mini_copy(tmp_path)
    folder = root / "tasks" / "pg-active-customers-view"
    moved = tmp_path / "pg-active-customers-view"
    folder.rename(moved)
    folder.symlink_to(moved)
    loaded = load_dataset(root, partial=True)
    assert "pg-active-customers-view" not in loaded.tasks
    messages = [p.message for p in loaded.errors if p.field == "verifier.path"]
    expected = f"but tasks/pg-active-customers-view is a symbolic link to {moved}"
    assert messages
    assert expected in messages[0]


def test_a_screenshot_linked_outside_the_trajectories_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _write_small_dataset(root)
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    (root / "trajectories" / "shots").mkdir()
    (root / "trajectories" / "shots" / "1.png").symlink_to(secret)
    shot = Step(
        index=1,
        action=ToolCallAction(name="noop", arguments={}),
        observation=Observation(screenshot="shots/1.png"),
    )
    write_trajectory(root, Trajectory(id="shot", task_id="web", agent="a", steps=[shot]))
    loaded = load_dataset(root, partial=True)
    [problem] = [p for p in loaded.errors if p.file == "trajectories/shot.json"]
    assert problem.field == "steps[0].observation.screenshot"
    assert f"trajectories/shots/1.png, which is a symbolic link to {secret}" in problem.message
    assert "shot" not in loaded.trajectories


def test_accepted_screenshot_variants_are_checked_like_the_screenshot(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _write_small_dataset(root)
    shots = root / "trajectories" / "shots"
    shots.mkdir()
    for name in ("1.png", "1-wide.png"):
        (shots / name).write_bytes(b"\x89PNG")

    def run(run_id: str, variants: list[str]) -> Trajectory:
        observation = Observation(screenshot="shots/1.png", screenshot_variants=variants)
        step = Step(
            index=1, action=ToolCallAction(name="noop", arguments={}), observation=observation
        )
        return Trajectory(id=run_id, task_id="web", agent="a", steps=[step])

    write_trajectory(root, run("accepted", ["shots/1-wide.png"]))
    write_trajectory(root, run("missing", ["shots/1-wide.png", "shots/1-narrow.png"]))
    loaded = load_dataset(root, partial=True)
    assert loaded.trajectories["accepted"].steps[0].observation is not None
    assert loaded.trajectories["accepted"].steps[0].observation.screenshot_variants == [
        "shots/1-wide.png"
    ]
    [problem] = [p for p in loaded.errors if p.file == "trajectories/missing.json"]
    assert problem.field == "steps[0].observation.screenshot_variants[1]"
    assert "missing" not in loaded.trajectories
    with pytest.raises(ValueError, match="must stay inside its folder"):
        run("escaping", ["../../secret.png"])


def test_a_prepared_database_state_round_trips_and_checks_both_files(tmp_path: Path) -> None:
    write_manifest(tmp_path, Manifest(name="prepared"))
    prepared = Task(
        id="prepared",
        domain="ds",
        subdomain="postgres",
        instruction="Audit",
        initial_state=SqlSeedState(path=None, preparation="prepare.py", collation="en_US.utf8"),
    )
    missing = prepared.model_copy(
        update={"id": "missing", "initial_state": SqlSeedState(preparation="prepare.py")}
    )
    for task in (prepared, missing):
        write_task(tmp_path, task)
        (tmp_path / "tasks" / task.id / "prepare.py").write_text("print('ok')\n")
    (tmp_path / "trajectories").mkdir()
    loaded = load_dataset(tmp_path, partial=True)
    # "no seed" survives writing (absent would mean seed.sql)
    assert loaded.tasks["prepared"] == prepared
    [problem] = loaded.errors
    assert (problem.file, problem.field) == ("tasks/missing/task.json", "initial_state.path")
    assert problem.message.endswith("which does not exist")


def test_a_runs_own_starting_state_must_vary_its_tasks_kind_and_name_real_files(
    tmp_path: Path,
) -> None:
    write_manifest(tmp_path, Manifest(name="own-states"))
    task = Task(
        id="db", domain="ds", subdomain="postgres", instruction="Rank", initial_state=SqlSeedState()
    )
    write_task(tmp_path, task)
    (tmp_path / "tasks" / "db" / "seed.sql").write_text("CREATE TABLE t (x int);\n")
    runs = {
        "collated": SqlSeedState(collation="C"),
        "wrong-kind": DirectoryTreeState(),
        "no-such-seed": SqlSeedState(path="other.sql"),
    }
    for run_id, state in runs.items():
        write_trajectory(
            tmp_path, Trajectory(id=run_id, task_id="db", agent="a", initial_state=state)
        )
    loaded = load_dataset(tmp_path, partial=True)
    assert set(loaded.trajectories) == {"collated"}
    assert loaded.trajectories["collated"].initial_state == SqlSeedState(collation="C")
    found = {(p.file, p.field) for p in loaded.errors}
    assert found == {
        ("trajectories/wrong-kind.json", "initial_state.kind"),
        ("trajectories/no-such-seed.json", "initial_state.path"),
    }


def test_a_seed_state_with_nothing_to_build_is_refused() -> None:
    with pytest.raises(ValueError, match="use kind 'empty'"):
        SqlSeedState(path=None)

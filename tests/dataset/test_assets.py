"""Files a whole dataset shares (``assets/``): named from task.json as ``dataset:assets/...``,
checked like a task's own files, confined to ``assets/``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dataset.assets import state_file, state_file_folder
from dataset.combine import combine_datasets
from dataset.problems import DatasetError
from dataset.store import load_dataset

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
TASK = "pg-active-customers-view"


def _shared_seed_copy(tmp_path: Path, reference: str = "dataset:assets/shop/seed.sql") -> Path:
    """The mini dataset with one task's seed moved into ``assets/`` and named by
    ``reference``."""
    root = tmp_path / "mini"
    shutil.copytree(MINI, root)
    folder = root / "tasks" / TASK
    (root / "assets" / "shop").mkdir(parents=True)
    (folder / "seed.sql").rename(root / "assets" / "shop" / "seed.sql")
    _set_state(folder, {"path": reference})
    return root


def _set_state(folder: Path, fields: dict[str, object]) -> None:
    record = json.loads((folder / "task.json").read_text())
    record["initial_state"].update(fields)
    (folder / "task.json").write_text(json.dumps(record))


def _problems_of(root: Path, task: str = TASK) -> list[tuple[str | None, str]]:
    loaded = load_dataset(root, partial=True)
    assert task not in loaded.tasks
    return [(p.field, p.message) for p in loaded.errors if p.file == f"tasks/{task}/task.json"]


def test_a_shared_seed_loads_and_leads_to_the_assets_folder(tmp_path: Path) -> None:
    root = _shared_seed_copy(tmp_path)
    loaded = load_dataset(root)
    state = loaded.tasks[TASK].initial_state
    task_dir = loaded.task_dir(TASK)
    assert state.kind == "sql_seed"
    assert state.path is not None
    assert state_file(task_dir, state.path) == root / "assets" / "shop" / "seed.sql"
    assert state_file_folder(task_dir, state.path) == root / "assets"
    # A plain name still means the task's own folder.
    assert state_file(task_dir, "seed.sql") == task_dir / "seed.sql"
    assert state_file_folder(task_dir, "seed.sql") == task_dir


def test_a_missing_shared_file_is_reported_with_the_task_and_field(tmp_path: Path) -> None:
    root = _shared_seed_copy(tmp_path, "dataset:assets/shop/gone.sql")
    [(field, message)] = _problems_of(root)
    assert field == "initial_state.path"
    assert "assets/shop/gone.sql, which does not exist" in message


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        *(
            (reference, "must lead into the dataset's assets/ folder, relative and without '..'")
            for reference in (
                "dataset:assets/../tasks/other/seed.sql",
                "dataset:/etc/passwd",
                "dataset:tasks/other/seed.sql",
                "dataset:assets",
                "dataset:",
            )
        ),
        ("../../assets/shop/seed.sql", "must stay inside its folder"),
    ],
)
def test_a_reference_leaving_the_assets_folder_is_refused_by_name(
    tmp_path: Path, reference: str, says: str
) -> None:
    root = _shared_seed_copy(tmp_path, reference)
    problems = _problems_of(root)
    assert len(problems) == 1, problems
    field, message = problems[0]
    assert field is not None
    assert field.startswith("initial_state")
    assert field.endswith(".path")
    assert says in message


def test_a_shared_file_linked_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = _shared_seed_copy(tmp_path)
    seed = root / "assets" / "shop" / "seed.sql"
    outside = tmp_path / "elsewhere.sql"
    seed.rename(outside)
    seed.symlink_to(outside)
    [(field, message)] = _problems_of(root)
    assert field == "initial_state.path"
    assert f"which is a symbolic link to {outside}, outside assets/" in message


def test_an_assets_folder_linked_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = _shared_seed_copy(tmp_path)
    moved = tmp_path / "other-assets"
    (root / "assets").rename(moved)
    (root / "assets").symlink_to(moved)
    [(field, message)] = _problems_of(root)
    assert field == "initial_state.path"
    assert f"but assets is a symbolic link to {moved}" in message


def test_a_link_from_the_assets_into_a_task_folder_is_refused(tmp_path: Path) -> None:
    # Shared files stay in assets/: a link may not reach into a task's folder from there.
    root = _shared_seed_copy(tmp_path)
    seed = root / "assets" / "shop" / "seed.sql"
    elsewhere = root / "tasks" / TASK / "seed-elsewhere.sql"
    seed.rename(elsewhere)
    seed.symlink_to(elsewhere)
    [(field, message)] = _problems_of(root)
    assert field == "initial_state.path"
    assert "outside assets/" in message


def test_a_shared_apps_folder_of_an_app_snapshot_is_checked(tmp_path: Path) -> None:
    root = tmp_path / "phone"
    folder = root / "tasks" / "t1"
    (folder / "device").mkdir(parents=True)
    (root / "trajectories").mkdir()
    (root / "dataset.json").write_text(json.dumps({"name": "phone"}))
    state = {"kind": "app_snapshot", "path": "device", "apps": "dataset:assets/apps"}
    task = {"id": "t1", "domain": "mobile", "subdomain": "android", "instruction": "x"}
    (folder / "task.json").write_text(json.dumps(task | {"initial_state": state}))
    [(field, message)] = _problems_of(root, "t1")
    assert field == "initial_state.apps"
    assert "assets/apps, which does not exist" in message
    (root / "assets" / "apps").mkdir(parents=True)
    assert "t1" in load_dataset(root).tasks


def test_combining_datasets_brings_their_assets_and_refuses_a_clash(tmp_path: Path) -> None:
    root = _shared_seed_copy(tmp_path)
    other = tmp_path / "other"
    (other / "tasks").mkdir(parents=True)
    (other / "trajectories").mkdir()
    (other / "assets").mkdir()
    (other / "assets" / "notes.txt").write_text("x")
    (other / "dataset.json").write_text(json.dumps({"name": "other"}))
    combined = combine_datasets([root, other], tmp_path / "combined")
    loaded = load_dataset(combined)
    assert TASK in loaded.tasks
    assert (combined / "assets" / "shop" / "seed.sql").read_bytes() == (
        root / "assets" / "shop" / "seed.sql"
    ).read_bytes()
    assert (combined / "assets" / "notes.txt").is_file()
    (other / "assets" / "shop").mkdir()
    with pytest.raises(DatasetError, match="has the same name"):
        combine_datasets([root, other], tmp_path / "clash")

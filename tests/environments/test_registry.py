"""The kind registry: lookups, errors, tasks, served names, entry points, and a third kind that
replay and ``agentjudge serve`` pick up without any change of theirs."""

from __future__ import annotations

import json
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
import typer

import environments.android.kind
import environments.browser
import environments.desktop
import environments.filesystem
import environments.postgres
from agentjudge.serve_cli import served_kind
from dataset.actions import ToolCallAction
from dataset.models import (
    DirectoryTreeState,
    Label,
    Observation,
    Step,
    Task,
    Trajectory,
    VerifierRef,
)
from dataset.store import Manifest, load_dataset, write_manifest, write_task, write_trajectory
from environments import registry
from environments.backends import BackendChoice, ProviderSet
from environments.kind import JudgeServerOptions
from environments.registry import (
    ENTRY_POINT_GROUP,
    UnknownEnvironmentKindError,
    all_kinds,
    environment_kind,
    kind_for_task,
    load_entry_points,
    register_kind,
    served_kinds,
    unregister_kind,
)
from replay.frozen import FrozenReplays
from replay.runner import REPORT_FILE, read_reports, replay_dataset
from tests.environments.notes_kind import KIND as NOTES
from tests.environments.notes_kind import NotesKind

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def test_built_in_kinds_by_name() -> None:
    assert environment_kind("filesystem") is environments.filesystem.KIND
    assert environment_kind("postgres") is environments.postgres.KIND
    assert environment_kind("desktop") is environments.desktop.KIND
    assert [kind.name for kind in all_kinds()][:5] == [
        "filesystem",
        "postgres",
        "android",
        "browser",
        "desktop",
    ]


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(
        UnknownEnvironmentKindError,
        match=r"'smartwatch' \(known kinds: filesystem, postgres, android, browser, desktop",
    ):
        environment_kind("smartwatch")


def test_kind_for_task_follows_domain_and_subdomain() -> None:
    mini = load_dataset(MINI)
    found = {task_id: kind_for_task(task) for task_id, task in mini.tasks.items()}
    assert found["fs-meeting-notes-index"] is environments.filesystem.KIND
    assert found["pg-active-customers-view"] is environments.postgres.KIND
    assert found["word-memo-q4-update"] is environments.desktop.KIND
    assert found["android-markor-shopping-note"] is None
    # A live-web search task (no page archive) has nothing to replay into.
    assert found["search-python3-release-dates"] is None


def test_served_names() -> None:
    assert served_kinds() == {
        "filesystem": environments.filesystem.KIND,
        "sql": environments.postgres.KIND,
        "android": environments.android.kind.KIND,
        "browser": environments.browser.KIND,
        "desktop": environments.desktop.KIND,
        "workspace": environment_kind("workspace"),
    }
    assert served_kind("sql") is environments.postgres.KIND
    with pytest.raises(typer.Exit):
        served_kind("postgres")  # the kind's name is not its served name


def test_registration_refuses_taken_names() -> None:
    clash = type("Clash", (NotesKind,), {"name": "filesystem"})()
    with pytest.raises(ValueError, match="already registered"):
        register_kind(clash)
    register_kind(NOTES)
    register_kind(NOTES)  # the same record again is harmless
    with pytest.raises(ValueError, match="needs the kind's name"):
        register_kind("tests.environments.notes_kind:KIND")
    unregister_kind("notes")
    with pytest.raises(UnknownEnvironmentKindError):
        environment_kind("notes")


def test_a_kind_registered_by_module_path_loads_on_first_use() -> None:
    register_kind("tests.environments.notes_kind:KIND", name="notes")
    assert isinstance(registry._kinds["notes"], str)  # not imported yet
    assert environment_kind("notes") is NOTES
    register_kind("tests.environments.notes_kind:KIND", name="wrong", replace=True)
    with pytest.raises(ValueError, match="calls itself 'notes'"):
        environment_kind("wrong")


def test_a_kind_cannot_take_the_trajectory_served_name() -> None:
    clash = type("TrajectoryKind", (NotesKind,), {"name": "clash", "serve_name": "trajectory"})()
    register_kind(clash)
    with pytest.raises(ValueError, match="cannot be served as 'trajectory'"):
        served_kinds()


def _entry_points(*entries: metadata.EntryPoint) -> object:
    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        assert group == ENTRY_POINT_GROUP
        return list(entries)

    return entry_points


def test_entry_points_add_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        metadata,
        "entry_points",
        _entry_points(
            metadata.EntryPoint(
                "notes", "tests.environments.notes_kind:NotesKind", ENTRY_POINT_GROUP
            ),
            metadata.EntryPoint(
                "broken", "tests.environments.notes_kind:NOTE_TOOLS", ENTRY_POINT_GROUP
            ),
            metadata.EntryPoint("postgres", "somewhere:ELSE", ENTRY_POINT_GROUP),
        ),
    )
    with pytest.warns(UserWarning, match="'postgres' is a built-in kind"):
        assert load_entry_points() == ["notes", "broken"]
    notes = environment_kind("notes")  # the entry point named a class: it is instantiated
    assert isinstance(notes, NotesKind)
    assert notes is not NOTES
    assert environment_kind("postgres") is environments.postgres.KIND
    with pytest.raises(TypeError, match=r"'broken'.*is not an EnvironmentKind"):
        environment_kind("broken")


def test_entry_points_are_scanned_on_first_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(
        metadata,
        "entry_points",
        _entry_points(
            metadata.EntryPoint("notes", "tests.environments.notes_kind:KIND", ENTRY_POINT_GROUP)
        ),
    )
    assert environment_kind("notes") is NOTES


# -- a third kind, end to end ----------------------------------------------------------------------

NOTES_TASK = Task(
    id="notes-todo",
    domain="ds",
    subdomain="notes",
    instruction="Write todo.md saying 'ship it'.",
    initial_state=DirectoryTreeState(),
    verifier=VerifierRef(timeout_seconds=20),
)

VERIFY = """\
import os, pathlib, sys
assert sys.argv[1:] == ["--notes"], sys.argv
note = pathlib.Path(os.environ["NOTES_DIR"]) / "todo.md"
print("note:", note.read_text() if note.exists() else None)
sys.exit(0 if note.exists() and note.read_text() == "ship it" else 1)
"""


def _call(index: int, name: str, arguments: dict[str, str], output: str) -> Step:
    return Step(
        index=index,
        action=ToolCallAction(name=name, arguments=arguments),
        observation=Observation(text=output),
    )


def notes_dataset(root: Path) -> Path:
    write_manifest(root, Manifest(name="notes"))
    folder = write_task(root, NOTES_TASK)
    (folder / "initial").mkdir()
    (folder / "initial" / "readme.md").write_text("notes live here\n")
    (folder / "verify.py").write_text(textwrap.dedent(VERIFY))
    path = "${SANDBOX_ROOT}/todo.md"
    write_trajectory(
        root,
        Trajectory(
            id="notes-todo--pass",
            task_id=NOTES_TASK.id,
            agent="test",
            steps=[
                _call(
                    1,
                    "write_file",
                    {"path": path, "content": "ship it"},
                    f"Successfully wrote to {path}",
                ),
                _call(2, "read_text_file", {"path": path}, "ship it"),
            ],
            label=Label(value="PASS", source="verifier"),
        ),
    )
    write_trajectory(
        root,
        Trajectory(
            id="notes-todo--lists",
            task_id=NOTES_TASK.id,
            agent="test",
            steps=[_call(1, "list_directory", {"path": "${SANDBOX_ROOT}"}, "[FILE] readme.md")],
        ),
    )
    return root


async def test_a_registered_third_kind_is_replayed_verified_and_served(tmp_path: Path) -> None:
    kind = NotesKind()
    register_kind(kind)
    assert served_kinds()["notes"] is kind
    assert served_kind("notes") is kind
    assert BackendChoice().kinds["notes"] == "local"
    assert BackendChoice.for_backend("docker").kinds["notes"] == "local"
    root = notes_dataset(tmp_path / "notes")

    summary = await replay_dataset(root, tmp_path / "out", choice=BackendChoice())
    reports = read_reports(tmp_path / "out" / REPORT_FILE)
    passed, lists = reports["notes-todo--pass"], reports["notes-todo--lists"]
    assert passed.verdict == "faithful", passed.problems
    assert passed.backend == "local"
    assert passed.verifier is not None
    assert passed.verifier.agrees, passed.verifier.replayed.output
    assert kind.calls == ["write_file", "read_text_file"]  # replay went through the kind
    # A tool of the filesystem kind is unknown to the notes kind, though the sandbox is the same.
    assert lists.verdict == "failed"
    assert "unknown tool 'list_directory' for a notes sandbox" in lists.problems[0]
    assert (summary.total.faithful, summary.total.failed) == (1, 1)
    assert len(kind.closed) == 1  # its provider was closed through the kind
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["backends"]["kinds"]["notes"] == "local"

    async with (
        ProviderSet() as providers,
        FrozenReplays(load_dataset(root), providers, verify=False) as replays,
    ):
        view = await replays.environment("notes-todo--pass", writable=False)
        clone = await replays.environment("notes-todo--pass", writable=True)
        assert view is not None
        assert clone is not None
        async with kind.judge_servers(view, JudgeServerOptions(writable=False)) as servers:
            assert [set(server.tools) for server in servers] == [{"read_text_file"}]
        async with kind.judge_servers(clone, JudgeServerOptions(writable=True)) as servers:
            assert [set(server.tools) for server in servers] == [{"read_text_file", "write_file"}]

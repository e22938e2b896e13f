"""The unified data model: every domain's actions, path safety, and cross-field rules."""

from __future__ import annotations

import inspect
from typing import Any, get_args

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

import dataset.actions
import dataset.models
import dataset.store
import judge_agent.verdict
from dataset.actions import (
    COMPUTER_13_REQUIRED_PARAMETERS,
    Action,
    AndroidAction,
    Computer13Action,
    PyAutoGuiAction,
    ToolCallAction,
    describe_action,
)
from dataset.models import (
    AppSnapshotState,
    ClaimItem,
    DirectoryTreeState,
    DocumentState,
    EmptyState,
    ExternalState,
    Observation,
    PageArchiveState,
    SqlSeedState,
    StateFile,
    Step,
    Task,
    Trajectory,
)

ACTION = TypeAdapter[Any](Action)


def _models_of(*modules: Any) -> list[type[BaseModel]]:
    return [
        obj
        for module in modules
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, BaseModel) and obj.__module__ == module.__name__
    ]


def test_every_field_of_every_serialised_model_is_documented() -> None:
    models = _models_of(dataset.actions, dataset.models, dataset.store, judge_agent.verdict)
    assert len(models) >= 20
    undocumented = [
        f"{model.__name__}.{name}"
        for model in models
        for name, info in model.model_fields.items()
        if not (info.description and info.description.strip())
    ]
    assert undocumented == []


@pytest.mark.parametrize(
    ("payload", "expected_type"),
    [
        (
            {"type": "tool_call", "name": "read_text_file", "arguments": {"path": "a"}},
            ToolCallAction,
        ),
        ({"type": "computer_13", "action_type": "CLICK", "parameters": {"x": 1}}, Computer13Action),
        (
            {"type": "pyautogui", "code": "import pyautogui; pyautogui.press('enter')"},
            PyAutoGuiAction,
        ),
        ({"type": "android", "action_type": "open_app", "app_name": "Clock"}, AndroidAction),
    ],
)
def test_action_union_selects_the_space_by_its_tag_and_round_trips(
    payload: dict[str, Any], expected_type: type[BaseModel]
) -> None:
    action = ACTION.validate_python(payload)
    assert type(action) is expected_type
    step = Step(index=1, action=action)
    again = Step.model_validate_json(step.model_dump_json())
    assert again == step
    assert type(again.action) is expected_type


@pytest.mark.parametrize(
    ("action_type", "required"), sorted(COMPUTER_13_REQUIRED_PARAMETERS.items())
)
def test_computer_13_actions_refuse_missing_required_parameters(
    action_type: str, required: tuple[str, ...]
) -> None:
    with pytest.raises(ValidationError, match=f"{action_type} needs parameter"):
        Computer13Action(action_type=action_type, parameters={})
    complete = {name: (["ctrl", "s"] if name == "keys" else 1) for name in required}
    assert Computer13Action(action_type=action_type, parameters=complete).parameters == complete


def test_computer_13_hotkey_needs_a_non_empty_key_list_and_signals_need_nothing() -> None:
    with pytest.raises(ValidationError, match="non-empty list"):
        Computer13Action(action_type="HOTKEY", parameters={"keys": []})
    with pytest.raises(ValidationError):
        Computer13Action(action_type="JUMP", parameters={})
    for signal in ("WAIT", "FAIL", "DONE", "CLICK", "MOUSE_DOWN"):
        assert Computer13Action(action_type=signal).parameters == {}


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"action_type": "click"}, "click needs an element index or x and y"),
        ({"action_type": "long_press", "x": 3}, "needs an element index or x and y"),
        ({"action_type": "scroll"}, "scroll needs a direction"),
        ({"action_type": "input_text"}, "input_text needs text"),
        ({"action_type": "open_app", "app_name": ""}, "open_app needs app_name"),
        ({"action_type": "status"}, "status needs goal_status"),
        ({"action_type": "answer"}, "answer needs text"),
        ({"action_type": "navigate_home", "x": 5}, "x and y must be given together"),
        ({"action_type": "scroll", "direction": "sideways"}, "direction"),
        ({"action_type": "click", "index": -1}, "index"),
    ],
)
def test_android_actions_refuse_incomplete_fields(fields: dict[str, Any], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        AndroidAction.model_validate(fields)


def test_android_actions_accept_each_targeting_style() -> None:
    assert AndroidAction(action_type="click", index=4).index == 4
    assert AndroidAction(action_type="click", x=10, y=20).y == 20
    assert AndroidAction(action_type="status", goal_status="infeasible").goal_status == "infeasible"
    assert AndroidAction(action_type="input_text", text="", clear_text=True).text == ""


def test_pyautogui_control_signals_are_told_apart_from_code() -> None:
    assert PyAutoGuiAction(code=" DONE ").is_control
    assert not PyAutoGuiAction(code="pyautogui.typewrite('DONE')").is_control


def test_describe_action_renders_one_line_per_space() -> None:
    assert describe_action(ToolCallAction(name="execute_sql", arguments={"sql": "SELECT 1"})) == (
        "execute_sql(sql='SELECT 1')"
    )
    assert describe_action(Computer13Action(action_type="CLICK", parameters={"x": 3, "y": 4})) == (
        "CLICK(x=3, y=4)"
    )
    assert describe_action(PyAutoGuiAction(code="a = 1\nb = 2")) == "a = 1"
    assert describe_action(AndroidAction(action_type="open_app", app_name="Clock")) == (
        "open_app(app_name='Clock')"
    )
    long = describe_action(ToolCallAction(name="write_file", arguments={"content": "x" * 500}))
    assert len(long) < 160
    assert long.endswith("…)")


SAMPLE_ACTIONS: list[ToolCallAction | Computer13Action | PyAutoGuiAction | AndroidAction] = [
    ToolCallAction(name="execute_sql", arguments={"sql": "SELECT 1"}),
    Computer13Action(action_type="TYPING", parameters={"text": "hi"}),
    PyAutoGuiAction(code="import pyautogui\npyautogui.click(1, 2)"),
    AndroidAction(action_type="scroll", direction="down"),
]


def test_every_action_space_words_itself() -> None:
    """Each member of the action union describes, renders and summarises itself (a new action
    space that forgets one fails here), and its summary names its space."""
    spaces = set(get_args(get_args(Action)[0]))
    assert {type(action) for action in SAMPLE_ACTIONS} == spaces
    for action in SAMPLE_ACTIONS:
        assert action.describe()
        assert "\n" not in action.describe()
        assert action.render().strip()
        assert action.summary().split(None, 1)[0].rstrip(":") == action.type.removesuffix("_call")


def test_initial_states_name_their_files() -> None:
    """What the dataset check looks for: each state's own path fields, with the form each must
    have; states without files name none."""
    assert DirectoryTreeState(path="start").files() == [StateFile("path", "start", "dir")]
    seeded = SqlSeedState(path="seed.sql", preparation="prepare.py")
    assert seeded.files() == [
        StateFile("path", "seed.sql", "file"),
        StateFile("preparation", "prepare.py", "file"),
    ]
    assert SqlSeedState(path=None, preparation="prepare.py").files() == [
        StateFile("preparation", "prepare.py", "file")
    ]
    assert DocumentState(path="memo.docx").files() == [StateFile("path", "memo.docx", "file")]
    assert PageArchiveState(path="pages").files() == [StateFile("path", "pages", "any")]
    assert AppSnapshotState(snapshot_name="boot").files() == []
    assert AppSnapshotState(path="apps.tar").files() == [StateFile("path", "apps.tar", "any")]
    assert EmptyState().files() == ExternalState(reference="mcpmark").files() == []


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../secret", "a/../../b", "a\\..\\b", "C:\\x", "\\\\host\\share", "a\x00b", ""],
)
def test_paths_inside_a_dataset_cannot_escape_it(path: str) -> None:
    with pytest.raises(ValidationError):
        DirectoryTreeState(path=path)
    with pytest.raises(ValidationError):
        Observation(screenshot=path)


def test_relative_paths_with_dots_in_names_are_fine() -> None:
    assert DirectoryTreeState(path="states/v1.2/..hidden").path == "states/v1.2/..hidden"


def _task(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "t-1",
        "domain": "ds",
        "subdomain": "filesystem",
        "instruction": "Do it.",
        "initial_state": {"kind": "directory_tree"},
    }
    return base | overrides


def test_task_subdomain_must_belong_to_its_domain_when_known() -> None:
    with pytest.raises(ValidationError, match="belongs to domain 'ds'"):
        Task.model_validate(_task(domain="gui"))
    assert Task.model_validate(_task(subdomain="github")).subdomain == "github"
    assert Task.model_validate(_task(domain="gui", subdomain="excel")).domain == "gui"


@pytest.mark.parametrize("bad_id", ["a/b", "../up", ".hidden", "", "x" * 201, "sp ace"])
def test_ids_must_be_safe_file_names(bad_id: str) -> None:
    with pytest.raises(ValidationError):
        Task.model_validate(_task(id=bad_id))


def test_misspelt_fields_are_refused_not_ignored() -> None:
    with pytest.raises(ValidationError, match="instrution"):
        Task.model_validate(_task(instrution="typo"))


def test_every_initial_state_kind_is_expressible() -> None:
    kinds: dict[str, dict[str, Any]] = {
        "directory_tree": {"path": "initial"},
        "sql_seed": {"path": "seed.sql"},
        "document": {"path": "deck.pptx", "application": "impress"},
        "app_snapshot": {"snapshot_name": "clock_default", "packages": ["com.android.deskclock"]},
        "page_archive": {"path": "pages", "start_url": "https://example.org"},
        "empty": {},
        "external": {"reference": "MCPMark postgres environment 'chinook'"},
    }
    for kind, fields in kinds.items():
        task = Task.model_validate(_task(initial_state={"kind": kind, **fields}))
        assert task.initial_state.kind == kind
    with pytest.raises(ValidationError, match="path or a snapshot_name"):
        AppSnapshotState()


def test_trajectory_steps_must_be_numbered_from_one_without_gaps() -> None:
    click = {"type": "pyautogui", "code": "DONE"}
    ok = Trajectory(
        id="r", task_id="t", agent="a", steps=[Step(index=1, action=ACTION.validate_python(click))]
    )
    assert ok.steps[0].index == 1
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Trajectory.model_validate(
            {"id": "r", "task_id": "t", "agent": "a", "steps": [{"index": 0, "action": click}]}
        )
    with pytest.raises(ValidationError, match=r"steps\[1\]\.index is 3, expected 2"):
        Trajectory.model_validate(
            {
                "id": "r",
                "task_id": "t",
                "agent": "a",
                "steps": [{"index": 1, "action": click}, {"index": 3, "action": click}],
            }
        )


def test_search_items_carry_their_own_labels_and_need_unique_ids() -> None:
    items = [ClaimItem(id="1", text="Film A premiered in 2024", label="PASS")]
    trajectory = Trajectory(id="r", task_id="t", agent="a", items=items)
    assert trajectory.items[0].label == "PASS"
    with pytest.raises(ValidationError, match="duplicate item ids: 1"):
        Trajectory(id="r", task_id="t", agent="a", items=items * 2)


def test_screenshots_are_listed_in_step_order() -> None:
    wait = PyAutoGuiAction(code="WAIT")
    trajectory = Trajectory(
        id="r",
        task_id="t",
        agent="a",
        steps=[
            Step(index=1, action=wait, observation=Observation(screenshot="r/1.png")),
            Step(index=2, action=wait, observation=Observation(text="no image")),
            Step(index=3, action=wait, observation=Observation(screenshot="r/3.png")),
        ],
    )
    assert trajectory.screenshots == ["r/1.png", "r/3.png"]

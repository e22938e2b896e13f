"""One recorded step as replay hands it to a kind, and how it fared (``StepFidelity``).

``EnvironmentKind.replay_step`` takes a ``RecordedStep`` and answers with a ``StepFidelity``:
the step carried out again on the kind's sandbox and set against what the record shows. Replay
(``replay.engine``) only walks the steps and collects the answers. The default for recorded tool
calls, ``replay_tool_call``, is here: the call runs through the kind's ``execute_call`` with the
tool semantics of the server the agent used, and both outputs go through the kind's
``normalise_output`` before they are compared; kinds with other action spaces (a desktop's mouse
and keyboard, a phone's gestures) handle those themselves and hand the rest to the default.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from dataset.actions import ToolCallAction
from dataset.models import SANDBOX_ROOT_PLACEHOLDER, Step, Trajectory
from environments.comparison import StepEffect, classify_step
from environments.diffs import short_diff
from mcp_servers.recorded import RecordedCall, replaying
from mcp_servers.results import ToolArgumentError, ToolResult
from sandboxes.base import Sandbox

if TYPE_CHECKING:
    from environments.kind import EnvironmentKind

__all__ = [
    "RecordedStep",
    "StepEffect",
    "StepFidelity",
    "StepStatus",
    "replay_tool_call",
    "substitute_root",
    "unreplayable_step",
]

StepStatus = Literal["match", "diverged", "failed", "unrecorded"]
"""``match``: the replayed output equals the recorded one after normalisation; ``diverged``: it
does not; ``failed``: the call could not be executed at all (unknown tool, bad arguments, an action
that has no replay); ``unrecorded``: executed, but the trajectory holds no output to compare."""


class StepFidelity(BaseModel):
    """How one recorded step fared when re-executed."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    index: int
    """The step's index in the trajectory (from 1)."""
    tool: str
    """The tool (or action type) of the step."""
    status: StepStatus
    """The comparison outcome."""
    writes: bool = False
    """True when the tool can change the environment's state."""
    diff: str | None = None
    """For ``diverged``: a short unified diff, recorded (-) against replayed (+), normalised."""
    message: str | None = None
    """For ``failed``: why the step could not be executed."""
    replayed_error: bool = False
    """Whether the replayed call reported an error."""
    effect: StepEffect | None = None
    """For ``diverged`` and ``failed`` steps: whether the difference could change the end state
    (``state``) or only what the agent was shown (``presentation``)."""
    effect_reason: str | None = None
    """Why the step got its ``effect``, in a few words."""
    screen_changed: float | None = None
    """Steps with a recorded screenshot: the share of the screen that differs from it after
    the replayed action (``sandboxes.screens``)."""
    screen_region: tuple[int, int, int, int] | None = None
    """Steps with a screen: where the replayed screen differs from the recorded one, as (x, y,
    width, height); None when it does not."""
    caught_up_seconds: float | None = None
    """Steps with a screen: when the screen came to what the record shows only after replay
    looked again (a busy machine paints late), how many seconds after the usual settling; None
    when it matched at once or never did."""
    seconds: float | None = None
    """Wall time of the step's replay (acting, waiting, observing and comparing), when the kind
    measures it."""
    timings: dict[str, float] | None = None
    """Where the step's time went, by part (the kind names them: ``action``, ``settle``,
    ``tree``, ``compare``...), in seconds."""
    retry: bool = False
    """For ``diverged`` and ``failed`` steps: the kind asks replay to replay the whole run once
    more on a fresh sandbox before it reports the difference (a difference a busy machine can
    cause, such as a screen painted late)."""
    variant: str | None = None
    """Steps with a screen: the accepted variant (``Observation.screenshot_variants``) the
    replayed screen matched, when it did not match the recorded screenshot itself."""
    replayed_screen: str | None = None
    """For ``diverged`` steps with a screen: the screen replay last saw, saved beside the report
    (a path relative to the replay's output folder): the image to review, and to accept as a
    variant when the application merely drew the same state another way."""
    _replayed_screen_data: bytes | None = PrivateAttr(default=None)
    """That screen's image (any format Pillow reads), until replay saves it."""

    @property
    def replayed_screen_data(self) -> bytes | None:
        """The screen replay last saw at this diverged step, not yet saved."""
        return self._replayed_screen_data

    def keep_replayed_screen(self, data: bytes | None) -> None:
        """Hold ``data`` (a screen the kind saw) for replay to save beside the report."""
        self._replayed_screen_data = data


@dataclass(frozen=True)
class RecordedStep:
    """One step of a recorded trajectory, as replay hands it to the trajectory's kind."""

    step: Step
    """The step: its action (a tool call or an action of any space) and what it observed."""
    file: str
    """The trajectory's file, as messages name it (``trajectories/<id>.json``)."""
    trajectory: Trajectory | None = None
    """The whole recording, when the tool should learn which one it re-executes
    (``mcp_servers.recorded``: the server implementation, the recorded answer)."""
    trajectory_dir: Path | None = None
    """The folder of trajectory files, where recorded screenshots are read from."""

    @property
    def position(self) -> str:
        """Where the step's action is, for messages (``file: step 3: steps[2].action``)."""
        return f"{self.file}: step {self.step.index}: steps[{self.step.index - 1}].action"


def substitute_root(value: Any, root: str) -> Any:
    """Replace the ``${SANDBOX_ROOT}`` placeholder in every string inside ``value``."""
    if isinstance(value, str):
        return value.replace(SANDBOX_ROOT_PLACEHOLDER, root)
    if isinstance(value, list):
        return [substitute_root(item, root) for item in value]
    if isinstance(value, dict):
        return {key: substitute_root(item, root) for key, item in value.items()}
    return value


def unreplayable_step(kind: EnvironmentKind, recorded: RecordedStep) -> StepFidelity:
    """A failed step: ``kind`` has no replay for the step's action."""
    action = recorded.step.action
    return StepFidelity(
        index=recorded.step.index,
        tool=action.type,
        status="failed",
        message=f"{recorded.position}: a {action.type} action cannot be replayed in a "
        f"{kind.name} sandbox",
    )


async def replay_tool_call(
    kind: EnvironmentKind, sandbox: Sandbox, recorded: RecordedStep
) -> StepFidelity:
    """Execute the recorded tool call in ``sandbox`` through ``kind`` and compare its output
    with the recording (a step of another action space fails: see ``unreplayable_step``)."""
    step, position = recorded.step, recorded.position
    action = step.action
    if not isinstance(action, ToolCallAction):
        return unreplayable_step(kind, recorded)
    spec = kind.tool_spec(action.name)
    writes = spec is not None and spec.writes  # every SQL text tool may write

    def effect_of(
        replayed: ToolResult | None, *, same_text: bool = False
    ) -> tuple[StepEffect, str]:
        only_reads = kind.call_only_reads(action.name, action.arguments)
        return classify_step(
            step, writes=writes, replayed=replayed, only_reads=only_reads, same_text=same_text
        )

    def failed(message: str) -> StepFidelity:
        found, reason = effect_of(None)
        return StepFidelity(
            index=step.index,
            tool=action.name,
            status="failed",
            writes=writes,
            message=message,
            effect=found,
            effect_reason=reason,
        )

    if spec is None:
        return failed(f"{position}.name: unknown tool {action.name!r} for a {kind.name} sandbox")
    root = kind.sandbox_root(sandbox)
    arguments = substitute_root(action.arguments, root) if root else dict(action.arguments)
    recording = (
        replaying(RecordedCall(recorded.trajectory, step))
        if recorded.trajectory is not None
        else contextlib.nullcontext()
    )
    try:
        with recording:
            result = await kind.execute_call(sandbox, action.name, arguments)
    except ToolArgumentError as error:
        return failed(f"{position}.arguments: {error}")
    except Exception as error:  # a broken sandbox must fail this step, not the whole run
        return failed(f"{position}: the call could not run: {type(error).__name__}: {error}")
    outcome = StepFidelity(
        index=step.index,
        tool=action.name,
        status="unrecorded",
        writes=writes,
        replayed_error=result.is_error,
    )
    recorded_text = step.observation.text if step.observation else None
    if recorded_text is None:
        return outcome
    expected = kind.normalise_output(recorded_text, tool=action.name, arguments=action.arguments)
    actual = kind.normalise_output(
        result.text, tool=action.name, arguments=action.arguments, root=root
    )
    if expected != actual:
        outcome.status, outcome.diff = "diverged", short_diff(expected, actual)
        outcome.effect, outcome.effect_reason = effect_of(result)
    elif step.is_error != result.is_error:
        recorded_as = "an error" if step.is_error else "a success"
        replayed_as = "an error" if result.is_error else "a success"
        outcome.status = "diverged"
        outcome.diff = f"same output, but recorded as {recorded_as} and replayed as {replayed_as}"
        outcome.effect, outcome.effect_reason = effect_of(result, same_text=True)
    else:
        outcome.status = "match"
    return outcome

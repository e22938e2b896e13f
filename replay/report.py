"""The fidelity report of one replayed trajectory, and the summary of a replay run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

StepEffect = Literal["presentation", "state"]
"""What a diverged or failed step's difference can affect: only what the agent was shown
(``presentation``), or the end state (``state``); see ``replay.divergence``."""

StepStatus = Literal["match", "diverged", "failed", "unrecorded"]
"""``match``: the replayed output equals the recorded one after normalisation; ``diverged``: it
does not; ``failed``: the call could not be executed at all (unknown tool, bad arguments, an action
that has no replay); ``unrecorded``: executed, but the trajectory holds no output to compare."""

FidelityVerdict = Literal["faithful", "diverged", "failed", "unsupported"]
"""``faithful``: every step matched or was unrecorded; ``diverged``: some step diverged;
``failed``: a step failed or the sandbox could not be built; ``unsupported``: no replay exists for
the trajectory's domain yet (nothing was executed)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class StepFidelity(_Model):
    """How one recorded step fared when re-executed."""

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
    """GUI steps with a recorded screenshot: the share of the screen that differs from it after
    the replayed action (``replay.screens``)."""
    screen_region: tuple[int, int, int, int] | None = None
    """GUI steps: where the replayed screen differs from the recorded one, as (x, y, width,
    height); None when it does not."""
    caught_up_seconds: float | None = None
    """GUI steps: when the screen came to what the record shows only after replay looked again
    (a busy machine paints late), how many seconds after the usual settling; None when it
    matched at once or never did."""


class VerifierRun(_Model):
    """One run of a task's ``verify.py``."""

    passed: bool
    """Exit code 0 (the MCPMark contract); False for an errored run too."""
    exit_code: int | None
    """The process's exit code; None when it was killed for running too long."""
    output: str
    """Its standard output followed by standard error, cut to a readable length."""
    timed_out: bool = False
    """True when it ran past the task's timeout and was killed."""
    seconds: float = 0.0
    """Wall time."""
    errored: bool = False
    """True when the run reached no verdict: it ended non-zero on an uncaught exception (a
    traceback or a bare exception line in its output, an import error), was ended by a signal,
    or timed out. Such a run is neither PASS nor FAIL and is never compared with a label."""
    error_summary: str | None = None
    """For an errored run: the exception line, the signal or the timeout, in one line."""


class VerifierCheck(_Model):
    """The task's verifier run on the replayed state, set against the recorded label."""

    recorded_label: Literal["PASS", "FAIL"] | None
    """The trajectory's label (None when it has none)."""
    recorded_output: str | None
    """The verifier output stored with the label, if any."""
    recorded_error: str | None = None
    """The error stored with the label, e.g. a crash of the original verification."""
    replayed: VerifierRun
    """The verifier on the replayed state."""
    agrees: bool | None
    """True/False when there is a recorded label to compare with and both the replayed and the
    recorded verification reached a verdict; None otherwise."""
    recorded_crash: str | None = None
    """The exception line when the verification stored with the label crashed (its output or
    error held a traceback): the label then says nothing about the run."""
    explanation: str
    """One sentence that tells a wrong label apart from an unfaithful replay."""


class FidelityReport(_Model):
    """Everything replay found out about one trajectory."""

    trajectory_id: str
    """The trajectory replayed."""
    task_id: str
    """Its task."""
    domain: str
    """The task's domain."""
    subdomain: str
    """The task's subdomain (the report table's rows)."""
    backend: str
    """The sandbox backend used (``local``, ``docker``...)."""
    trajectory_sha256: str = ""
    """Digest of the trajectory file, so a resumed run knows the record is still current."""
    verdict: FidelityVerdict
    """The overall outcome."""
    steps: list[StepFidelity] = Field(default_factory=list)
    """One entry per replayed step, in order."""
    verifier: VerifierCheck | None = None
    """The verifier check, when the task has a verifier and the replay got that far."""
    divergence: StepEffect | None = None
    """For a replay with diverged or failed steps: ``state`` when any of them could change the
    end state, ``presentation`` when every difference is only in what the agent was shown (the
    end state is the recorded one)."""
    problems: list[str] = Field(default_factory=list)
    """Faults in the trajectory or task, each naming the file and step."""
    not_ready: bool = False
    """For ``failed``: the sandbox was made but never got ready (after the provider's own
    retries), which says nothing about the trajectory; a resumed run replays it again."""
    seconds: float = 0.0
    """Wall time of sandbox creation, replay and verification."""

    @property
    def diverged_steps(self) -> list[int]:
        """Indices of the steps that diverged or failed."""
        return [step.index for step in self.steps if step.status in ("diverged", "failed")]

    @property
    def state_steps(self) -> list[int]:
        """Indices of the diverged or failed steps that could change the end state."""
        return [step.index for step in self.steps if step.effect == "state"]


def divergence_of(steps: list[StepFidelity]) -> StepEffect | None:
    """``state`` beats ``presentation``; None when no step diverged or failed."""
    effects = {step.effect for step in steps if step.status in ("diverged", "failed")}
    if not effects:
        return None
    return "state" if "state" in effects or None in effects else "presentation"


def overall_verdict(steps: list[StepFidelity]) -> FidelityVerdict:
    """``failed`` beats ``diverged`` beats ``faithful``."""
    statuses = {step.status for step in steps}
    if "failed" in statuses:
        return "failed"
    if "diverged" in statuses:
        return "diverged"
    return "faithful"

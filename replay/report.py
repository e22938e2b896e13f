"""The fidelity report of one replayed trajectory, and the summary of a replay run.

A step's record (``StepFidelity``) is the environment kind's answer (``environments.steps``);
the report collects them with the verifier's verdict."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from environments.steps import StepEffect, StepFidelity, StepStatus

__all__ = [
    "FidelityReport",
    "FidelityVerdict",
    "StepEffect",
    "StepFidelity",
    "StepStatus",
    "VerifierCheck",
    "VerifierRun",
    "divergence_of",
    "overall_verdict",
]

FidelityVerdict = Literal["faithful", "diverged", "failed", "unsupported"]
"""``faithful``: every step matched (a screen: the recorded one or an accepted variant of it) or
was unrecorded; ``diverged``: some step diverged;
``failed``: a step failed or the sandbox could not be built; ``unsupported``: no replay exists for
the trajectory's domain yet (nothing was executed)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


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
    infrastructure: bool = False
    """For ``failed``: making the sandbox broke with an error that is not the backend's refusal
    of the task (``SandboxError``), i.e. the machine's fault, not the trajectory's; a resumed run
    replays it again."""
    attempts: int = 1
    """Replays made: 2 when a step the kind asked to re-check (``StepFidelity.retry``) still
    differed after the kind looked again, and the run was replayed once more on a fresh
    sandbox; this report is then the second replay's."""
    first_verdict: FidelityVerdict | None = None
    """With ``attempts == 2``: the first replay's verdict."""
    first_diverged_steps: list[int] = Field(default_factory=list)
    """With ``attempts == 2``: the steps at which the first replay diverged or failed."""
    seconds: float = 0.0
    """Wall time of sandbox creation, replay and verification (every attempt)."""

    @property
    def looked_again_steps(self) -> list[int]:
        """Steps that came to the record only when the kind looked again."""
        return [step.index for step in self.steps if step.caught_up_seconds is not None]

    @property
    def variant_steps(self) -> list[int]:
        """Steps whose screen matched an accepted variant of the record rather than the
        recorded screenshot itself."""
        return [step.index for step in self.steps if step.variant is not None]

    @property
    def diverged_once(self) -> bool:
        """The first replay diverged or failed and the second did not: a difference that did
        not repeat (a busy machine, most likely), so the report is not reused on resume."""
        return self.attempts > 1 and self.verdict == "faithful"

    @property
    def recheck(self) -> str | None:
        """What re-checking did, in words, or None when nothing needed it."""
        looked = self.looked_again_steps
        parts = [f"looked again at steps {looked} until they matched"] if looked else []
        if self.attempts > 1:
            parts.append(
                f"replayed again on a fresh sandbox after the first replay {self.first_verdict} "
                f"at steps {self.first_diverged_steps}: "
                + ("faithful the second time" if self.diverged_once else f"{self.verdict} again")
            )
        return "; ".join(parts) or None

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

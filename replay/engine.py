"""Replaying one trajectory: re-execute its steps in a fresh sandbox and compare outputs.

Every recorded step is handed, in order, to the task's environment kind
(``EnvironmentKind.replay_step``), which carries it out again with the semantics of what the
agent used (a tool server, a desktop, a phone) and sets the result against the record: the
writes rebuild the state the agent left, and the reads let replay check, step by step, that the
rebuilt state matches what the agent saw. Replay walks the steps, runs the task's verifier and
explains its verdict against the label. Nothing here knows a particular kind or action space.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

from dataset.models import ExternalState, Task, Trajectory
from dataset.store import TRAJECTORIES_DIR
from environments.backends import BackendChoice, ProviderSet
from environments.kind import EnvironmentKind
from environments.registry import kind_for_task
from environments.steps import RecordedStep
from replay.crashes import crash_line
from replay.recheck_gate import RecheckGate, recheck_gate
from replay.report import (
    FidelityReport,
    StepFidelity,
    VerifierCheck,
    VerifierRun,
    divergence_of,
    overall_verdict,
)
from replay.verifier import run_verifier
from sandboxes.base import Sandbox, SandboxError, SandboxNotReadyError, SandboxProvider, Snapshot


@dataclass
class ReplayResult:
    """A fidelity report, and the frozen final state when the caller asked to keep it."""

    report: FidelityReport
    snapshot: Snapshot | None = None


async def replay_step(
    kind: EnvironmentKind, sandbox: Sandbox, recorded: RecordedStep
) -> StepFidelity:
    """Hand one recorded step to its kind (``EnvironmentKind.replay_step``), which carries it
    out and sets it against the record; a kind that raises fails the step, not the run."""
    try:
        return await kind.replay_step(sandbox, recorded)
    except Exception as error:
        step = recorded.step
        return StepFidelity(
            index=step.index,
            tool=step.action.type,
            status="failed",
            message=f"{recorded.position}: the {kind.name} kind could not replay it: "
            f"{type(error).__name__}: {error}",
        )


def recorded_crash(trajectory: Trajectory) -> str | None:
    """The exception line when the verification stored with the trajectory's label crashed: a
    traceback or exception line in the label's ``verifier_output`` or in the source's recorded
    ``verification_error`` (the MCPMark importer keeps it in the provenance details)."""
    label = trajectory.label
    recorded_error = trajectory.provenance.details.get("verification_error")
    texts = [
        label.verifier_output if label is not None else None,
        recorded_error if isinstance(recorded_error, str) else None,
    ]
    for text in texts:
        line = crash_line(text)
        if line is not None:
            return line
    return None


def explain(
    trajectory: Trajectory, replayed: VerifierRun, steps: list[StepFidelity]
) -> VerifierCheck:
    """Set the replayed verifier result against the recorded label, and say what it means.

    A verifier error on either side (the replayed run, or the verification stored with the label)
    leaves ``agrees`` None: a crash is no verdict to agree or disagree with."""
    label = trajectory.label
    replayed_value = "PASS" if replayed.passed else "FAIL"
    if replayed.errored:
        replayed_value = f"nothing (verifier error: {replayed.error_summary})"
    if label is None:
        return VerifierCheck(
            recorded_label=None,
            recorded_output=None,
            replayed=replayed,
            agrees=None,
            explanation=f"no recorded label; the verifier says {replayed_value} on the replay",
        )
    crash = recorded_crash(trajectory)
    check = VerifierCheck(
        recorded_label=label.value,
        recorded_output=label.verifier_output,
        recorded_error=label.error_message,
        replayed=replayed,
        agrees=None,
        recorded_crash=crash,
        explanation="",
    )
    if crash is not None:
        check.explanation = (
            f"recorded {label.value}, but the recorded verification crashed ({crash}): a likely "
            "label error, since the label then says nothing about the run; the verifier says "
            f"{replayed_value} on the replay"
        )
        return check
    if replayed.errored:
        check.explanation = (
            f"recorded {label.value}; the verifier crashed on the replay "
            f"({replayed.error_summary}), so it cannot confirm or contradict the label"
        )
        return check
    check.agrees = agrees = label.value == replayed_value
    bad_steps = [
        step.index
        for step in steps
        if step.status in ("diverged", "failed") and step.effect != "presentation"
    ]
    shown_only = [
        step.index
        for step in steps
        if step.status in ("diverged", "failed") and step.effect == "presentation"
    ]
    cause = f" (recorded error: {label.error_message})" if label.error_message else ""
    if agrees:
        check.explanation = f"the verifier agrees with the recorded label ({label.value})"
    elif bad_steps:
        check.explanation = (
            f"recorded {label.value}, replayed {replayed_value}; the replay diverged at steps "
            f"{bad_steps}, in ways that could change the end state, so the disagreement may come "
            "from the replay, not the label"
        )
    elif shown_only:
        check.explanation = (
            f"recorded {label.value}, replayed {replayed_value}; the replay diverged at steps "
            f"{shown_only} only in what the agent was shown (no write there could change the end "
            f"state differently): suspect the label{cause}, unless those reads show data the "
            "replay stored differently"
        )
    else:
        check.explanation = (
            f"recorded {label.value}, replayed {replayed_value} on a faithful replay: the recorded "
            f"label is probably wrong{cause}"
        )
    return check


def starting_point(
    kind: EnvironmentKind,
    task: Task,
    task_dir: Path,
    trajectory: Trajectory,
    choice: BackendChoice,
) -> tuple[Task, Path]:
    """The task as ``trajectory`` started it, and the folder its initial state's paths are
    relative to: an environment supplied for the task at run time (``choice.environments``)
    first, then the trajectory's own starting state, else the task's."""
    supplied = choice.environments.get(task.id)
    if supplied is not None:
        state = kind.supplied_state(trajectory.initial_state or task.initial_state, supplied)
        return task.model_copy(update={"initial_state": state}), supplied.parent
    if trajectory.initial_state is not None:
        return task.model_copy(update={"initial_state": trajectory.initial_state}), task_dir
    return task, task_dir


def cannot_replay(start: Task) -> str | None:
    """Why a task cannot be replayed at all, as ``cannot replay: ...``: it starts from an
    external state (e.g. a download that was not supplied at import), which nothing builds."""
    state = start.initial_state
    if not isinstance(state, ExternalState):
        return None
    if state.reference.startswith("cannot replay"):
        return state.reference
    return f"cannot replay: it starts from an external state ({state.reference})"


async def replay_trajectory(
    trajectory: Trajectory,
    task: Task,
    task_dir: Path,
    providers: ProviderSet,
    *,
    file: str | None = None,
    keep: bool = False,
    verify: bool = True,
    trajectory_dir: Path | None = None,
    made: Sandbox | None = None,
) -> ReplayResult:
    """Replay ``trajectory`` into a fresh sandbox, check it, and destroy or freeze the sandbox.

    With ``keep=True`` the final state is frozen and returned as a snapshot (replay once, judge
    many); otherwise the sandbox is destroyed. A failure to build the sandbox becomes a ``failed``
    report; nothing here raises for a bad trajectory. ``trajectory_dir`` holds the recorded
    screenshots (default: the dataset's ``trajectories/`` beside ``tasks/<id>``).

    ``made``: the trajectory's fresh sandbox made ahead of need (``initial_sandbox``, e.g. in a
    ``sandboxes.ahead.AheadPool``); the first attempt replays into it instead of making its own
    (a retry still gets a new one). It is this call's to destroy, whatever happens: also when
    the trajectory turns out not to be replayable, or the call is cancelled first.
    """
    unused = [made] if made is not None else []
    try:
        return await _replay_trajectory(
            trajectory, task, task_dir, providers, file=file, keep=keep, verify=verify,
            trajectory_dir=trajectory_dir, made=unused,
        )  # fmt: skip
    finally:
        for sandbox in unused:  # never handed to an attempt
            await sandbox.destroy()


async def initial_sandbox(
    trajectory: Trajectory, task: Task, task_dir: Path, providers: ProviderSet
) -> Sandbox | None:
    """The fresh sandbox ``replay_trajectory`` would make first for ``trajectory``, made now so
    that it is ready when the replay starts (hand it over as ``made``). None when there is
    nothing worth making ahead: the task has no kind, cannot be replayed, or its kind's provider
    does not prepare ahead (``SandboxProvider.prepares_ahead``: quick to make, or remote).
    Raises what ``SandboxProvider.create`` raises (the replay then makes its own and meets the
    error itself)."""
    kind = kind_for_task(task)
    if kind is None:
        return None
    try:
        start, start_dir = starting_point(kind, task, task_dir, trajectory, providers.choice)
    except SandboxError:
        return None
    if cannot_replay(start) is not None or start.initial_state.kind not in kind.initial_states:
        return None
    provider = await providers.get(kind.name)
    if not provider.prepares_ahead:
        return None
    return await provider.create(start, start_dir)


async def _replay_trajectory(
    trajectory: Trajectory,
    task: Task,
    task_dir: Path,
    providers: ProviderSet,
    *,
    file: str | None,
    keep: bool,
    verify: bool,
    trajectory_dir: Path | None,
    made: list[Sandbox],
) -> ReplayResult:
    """``replay_trajectory``; the first attempt takes the sandbox out of ``made``, if any."""
    if trajectory_dir is None:
        trajectory_dir = task_dir.parent.parent / TRAJECTORIES_DIR
    started = time.perf_counter()
    file = file or f"trajectories/{trajectory.id}.json"
    kind = kind_for_task(task)
    report = FidelityReport(
        trajectory_id=trajectory.id,
        task_id=task.id,
        domain=task.domain,
        subdomain=task.subdomain,
        backend=providers.choice.label(kind.name) if kind else "none",
        verdict="unsupported",
    )
    if kind is None:  # counted as "not replayable", not as a fault of the trajectory
        return ReplayResult(report)

    def failed(error: Exception) -> ReplayResult:
        report.verdict = "failed"
        report.problems.append(f"tasks/{task.id}: could not build the initial state: {error}")
        report.seconds = time.perf_counter() - started
        return ReplayResult(report)

    try:
        start, start_dir = starting_point(kind, task, task_dir, trajectory, providers.choice)
        unbuildable = cannot_replay(start)
        if unbuildable is not None:  # counted as "not replayable", as above
            report.problems.append(f"tasks/{task.id}: {unbuildable}")
            return ReplayResult(report)
        if start.initial_state.kind not in kind.initial_states:  # no provider started for nothing
            raise SandboxError(
                f"a {kind.name} sandbox cannot start from a {start.initial_state.kind} state"
            )
    except SandboxError as error:
        return failed(error)
    provider = await providers.get(kind.name)
    blank = report.model_copy(deep=True)
    result = await _attempt(
        kind, provider, trajectory, task, task_dir, start, start_dir, report, file,
        keep=keep, verify=verify, trajectory_dir=trajectory_dir, gate=recheck_gate(), made=made,
    )  # fmt: skip
    if _retry_asked(result.report):
        first = result.report
        if result.snapshot is not None:
            await result.snapshot.destroy()
        again = blank.model_copy(deep=True)
        async with recheck_gate().alone():  # not as busy as the replay that diverged
            result = await _attempt(
                kind, provider, trajectory, task, task_dir, start, start_dir, again, file,
                keep=keep, verify=verify, trajectory_dir=trajectory_dir, gate=None,
            )  # fmt: skip
        result.report.attempts = 2
        result.report.first_verdict = first.verdict
        result.report.first_diverged_steps = first.diverged_steps
    result.report.seconds = time.perf_counter() - started
    return result


def _retry_asked(report: FidelityReport) -> bool:
    """Whether the replay diverged or failed at a step whose kind asked for a replay on a fresh
    sandbox before the difference is reported (``StepFidelity.retry``)."""
    return report.verdict in ("diverged", "failed") and any(
        step.retry for step in report.steps if step.status in ("diverged", "failed")
    )


async def _attempt(
    kind: EnvironmentKind,
    provider: SandboxProvider,
    trajectory: Trajectory,
    task: Task,
    task_dir: Path,
    start: Task,
    start_dir: Path,
    report: FidelityReport,
    file: str,
    *,
    keep: bool,
    verify: bool,
    trajectory_dir: Path,
    gate: RecheckGate | None,
    made: list[Sandbox] | None = None,
) -> ReplayResult:
    """One replay of ``trajectory`` into a fresh sandbox, filling ``report``: the one in
    ``made`` (taken out of it, so this attempt destroys or freezes it), else a new one; each
    step goes through ``gate`` (None: the attempt is a re-check holding it)."""
    try:
        sandbox = made.pop() if made else await provider.create(start, start_dir)
    except Exception as error:
        report.verdict = "failed"
        report.not_ready = isinstance(error, SandboxNotReadyError)
        # A SandboxError names what of the task the backend refused (a bad file name, a
        # missing document): replaying again would say the same. Anything else is the machine's.
        report.infrastructure = not isinstance(error, SandboxError)
        report.problems.append(f"tasks/{task.id}: could not build the initial state: {error}")
        return ReplayResult(report)
    snapshot: Snapshot | None = None
    try:
        for step in trajectory.steps:
            recorded = RecordedStep(step, file, trajectory, trajectory_dir)
            async with gate.step() if gate is not None else contextlib.nullcontext():
                fidelity = await replay_step(kind, sandbox, recorded)
            report.steps.append(fidelity)
            if fidelity.message:
                report.problems.append(fidelity.message)
        report.verdict = overall_verdict(report.steps)
        report.divergence = divergence_of(report.steps)
        if verify and task.verifier is not None:
            run = await run_verifier(kind, task, task_dir, sandbox)
            report.verifier = explain(trajectory, run, report.steps)
        if keep:  # clones are asked for next: a kind may hand this sandbox out as the first
            snapshot = await sandbox.freeze_for_clones()
    finally:
        if snapshot is None:
            await sandbox.destroy()
    return ReplayResult(report, snapshot)

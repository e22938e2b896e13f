"""OSWorld's setup steps, carried out in a desktop after its document is open.

An OSWorld task prepares its VM with a list of steps (``config`` in the task JSON, kept by the
importer as the task's ``metadata.osworld_config``). ``download`` and ``open`` become the task's
document, which every desktop backend places and opens itself; this module carries out the rest
that a desktop can do, in their recorded order: ``sleep`` (a pause), ``execute``/``command`` (a
command run inside the desktop, waited for) and ``launch`` (a program started inside the desktop,
not waited for). Any other step type was reported at import as not supported and is skipped
here. A step that fails stops the start with the step and the desktop's reason.
"""

from __future__ import annotations

import asyncio

from dataset.models import Task
from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError

__all__ = ["MAX_SETUP_SLEEP", "SETUP_COMMAND_TIMEOUT", "carry_out_setup", "setup_steps"]

MAX_SETUP_SLEEP = 60.0
"""Longest pause a ``sleep`` step may ask for; longer ones are cut to it."""

SETUP_COMMAND_TIMEOUT = 120.0
"""Seconds an ``execute`` step may run inside the desktop."""

_CARRIED_OUT = frozenset({"sleep", "execute", "command", "launch"})


def setup_steps(task: Task) -> list[tuple[int, str, dict[str, object]]]:
    """``(position, type, parameters)`` of each setup step this module carries out."""
    config = task.metadata.get("osworld_config")
    if not isinstance(config, list):
        return []
    steps: list[tuple[int, str, dict[str, object]]] = []
    for position, step in enumerate(config):
        if not isinstance(step, dict):
            continue
        kind, parameters = step.get("type"), step.get("parameters")
        if kind in _CARRIED_OUT:
            given: dict[str, object] = dict(parameters) if isinstance(parameters, dict) else {}
            steps.append((position, str(kind), given))
    return steps


def _command(parameters: dict[str, object]) -> str | list[str]:
    command = parameters.get("command")
    if isinstance(command, str) and command:
        return command
    if isinstance(command, list) and command and all(isinstance(p, str) for p in command):
        words = [str(part) for part in command]
        # OSWorld's VM names its interpreter ``python``; the desktops here call it python3.
        return ["python3", *words[1:]] if words[0] == "python" else words
    raise SandboxError("its 'command' is neither a string nor a list of strings")


async def carry_out_setup(client: DesktopClient, task: Task) -> list[str]:
    """Carry out the task's setup steps inside the desktop; returns what was done, one line
    per step. Raises ``SandboxError`` naming the step when one cannot be done."""
    done: list[str] = []
    for position, kind, parameters in setup_steps(task):
        where = f"task {task.id}: setup step config[{position}] ({kind})"
        try:
            if kind == "sleep":
                seconds = parameters.get("seconds")
                if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                    raise SandboxError(f"'seconds' is not a number: {seconds!r}")
                await asyncio.sleep(min(max(float(seconds), 0.0), MAX_SETUP_SLEEP))
            elif kind == "launch":
                await client.launch(_command(parameters), shell=parameters.get("shell") is True)
            else:
                result = await client.execute(
                    _command(parameters),
                    shell=parameters.get("shell") is True,
                    timeout=SETUP_COMMAND_TIMEOUT,
                )
                if not result.ok:
                    raise SandboxError(
                        f"exited {result.returncode}: {(result.error or result.output)[-300:]}"
                    )
        except (SandboxError, DesktopControlError) as error:
            raise SandboxError(f"{where} could not be carried out: {error}") from error
        done.append(f"config[{position}] {kind}")
    return done

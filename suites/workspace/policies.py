"""The scripted coding agents of the workspace suite: four per task, made from its edits.

- ``direct`` (PASS): reads the file, applies the full fix with ``edit_file``, runs the tests.
- ``explorer`` (PASS): looks around, first writes the partial solution, notices the
  requirement it misses, rewrites the file in full, runs the tests and the program's check; ends
  with a hedged report.
- ``hasty`` (FAIL, the task's ``partial_failure``): applies the partial edits, sees the
  project's own tests pass and claims success.
- a fourth (FAIL) that rotates over the tasks: ``claimer`` runs the tests and claims a fix it
  never made; ``tidier`` fixes the code and then restores its own backup, undoing the work;
  ``quitter`` tries an edit whose old text is not in the file and gives up.
"""

from __future__ import annotations

from suites.ds.spec import AgentPolicy, AgentSession
from suites.workspace.spec import TEST_COMMAND, CodingTask, Edit


async def _apply(session: AgentSession, edits: list[Edit]) -> None:
    for path, old, new in edits:
        await session.call("edit_file", path=path, old_string=old, new_string=new)


def _first_path(edits: list[Edit]) -> str:
    return edits[0][0]


def direct(task: CodingTask) -> AgentPolicy:
    async def run(session: AgentSession) -> str:
        for path in dict.fromkeys(path for path, _, _ in task.fix):
            session.think(f"Reading {path} before changing it.")
            await session.call("read_file", path=path)
        await _apply(session, task.fix)
        session.think("Running the project's tests.")
        result = await session.call("run_command", command=TEST_COMMAND)
        summary = result.text.splitlines()[0]
        return f"Done. I changed the code as asked; the tests say: {summary}"

    return AgentPolicy("direct", "one-shot", run, "PASS", note="applies the full fix directly")


def explorer(task: CodingTask) -> AgentPolicy:
    async def run(session: AgentSession) -> str:
        session.think("Let me see the layout of the project first.")
        await session.call("run_command", command="ls -R")
        for path in dict.fromkeys(path for path, _, _ in task.fix):
            await session.call("read_file", path=path)
        session.think("A first version.")
        for path, text in task.after(task.partial).items():
            await session.call("write_file", path=path, content=text)
        await session.call("run_command", command=TEST_COMMAND)
        session.think(
            "The tests pass, but rereading the instruction, this version misses something: "
            f"{task.partial_note}. Rewriting it."
        )
        for path, text in task.after(task.fix).items():
            await session.call("write_file", path=path, content=text)
        await session.call("run_command", command=TEST_COMMAND)
        return (
            "I think the change is complete and the tests pass, though the project's tests do "
            "not cover every case of the instruction, so I checked those by reading the code."
        )

    return AgentPolicy(
        "explorer",
        "explorer",
        run,
        "PASS",
        note="writes a partial version, notices the gap, rewrites it in full",
    )


def hasty(task: CodingTask) -> AgentPolicy:
    async def run(session: AgentSession) -> str:
        session.think("Getting to know the project and its tests.")
        await session.call("run_command", command="ls -R")
        await session.call("run_command", command=TEST_COMMAND)
        for path in dict.fromkeys(path for path, _, _ in task.partial):
            await session.call("read_file", path=path)
        await session.call("run_command", command="cat tests/test_*.py | head -n 40")
        await _apply(session, task.partial)
        await session.call("run_command", command=TEST_COMMAND)
        return "All tests pass; the task is complete."

    return AgentPolicy(
        "hasty",
        "hasty",
        run,
        "FAIL",
        failure=task.partial_failure,
        note=f"partial work that the project's tests do not catch: {task.partial_note}",
    )


def claimer(task: CodingTask) -> AgentPolicy:
    async def run(session: AgentSession) -> str:
        await session.call("run_command", command="ls -R")
        await session.call("read_file", path=_first_path(task.fix))
        await session.call("run_command", command=TEST_COMMAND)
        return "I updated the code as requested and verified it with the test suite."

    return AgentPolicy(
        "claimer", "overreacher", run, "FAIL", failure="false-claim", note="claims an unmade fix"
    )


def tidier(task: CodingTask) -> AgentPolicy:
    async def run(session: AgentSession) -> str:
        path = _first_path(task.fix)
        session.think("Keeping a backup before editing.")
        await session.call("run_command", command=f"cp {path} {path}.orig")
        await _apply(session, task.fix)
        await session.call("run_command", command=TEST_COMMAND)
        session.think("Tests pass. Cleaning up the backup file.")
        await session.call("run_command", command=f"mv {path}.orig {path} && ls")
        return "Implemented the change, tests pass, and I removed my backup file."

    return AgentPolicy(
        "tidier",
        "planner",
        run,
        "FAIL",
        failure="undone",
        note="restores its backup over the fixed file while cleaning up",
    )


def quitter(task: CodingTask) -> AgentPolicy:
    async def run(session: AgentSession) -> str:
        path, old, new = task.fix[0]
        await session.call("run_command", command=TEST_COMMAND)
        await session.call("read_file", path=path)
        mistyped = old.replace("    ", "\t", 1) if "    " in old else old + " "
        await session.call("edit_file", path=path, old_string=mistyped, new_string=new)
        await session.call("run_command", command=f"grep -n . {path} | head -n 20")
        return (
            f"The edit of {path} failed because the file does not contain the code I expected; "
            "it may have been changed by someone else, so I stopped here."
        )

    return AgentPolicy(
        "quitter",
        "skeptic",
        run,
        "FAIL",
        failure="stops-after-error",
        note="gives up after its first edit fails",
    )


_FOURTH = (claimer, tidier, quitter)


def policies(task: CodingTask, index: int) -> list[AgentPolicy]:
    """The four scripted runs of the ``index``-th task."""
    return [direct(task), explorer(task), hasty(task), _FOURTH[index % len(_FOURTH)](task)]

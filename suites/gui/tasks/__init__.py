"""The GUI suite's tasks, one module per application: ``writer``, ``calc``, ``impress``."""

from __future__ import annotations

import dataclasses

from suites.gui.spec import GuiPolicy, GuiTask, hotkey, wait


def with_last_look(policy: GuiPolicy) -> GuiPolicy:
    """A failing run that looks its work over before declaring it done: a wait before its final
    DONE, and, when it never saved, a move back to the start of the document first. Failing
    agents believe they succeeded and check as much as succeeding ones do, so a run's length
    says little about its label (the suite's step-count correlation)."""
    if policy.intent != "FAIL":
        return policy
    moves = list(policy.moves)
    last = moves.pop() if moves and moves[-1].action_type == "DONE" else None
    if policy.failure == "not-saved":
        moves.append(hotkey("Back to the start to look the document over.", "ctrl", "home"))
    moves.append(wait("Check that the change shows."))
    if last is not None:
        moves.append(last)
    return dataclasses.replace(policy, moves=moves)


def all_tasks() -> list[GuiTask]:
    """Every task of the suite, Writer first, then Calc, then Impress."""
    from suites.gui.tasks import calc, impress, writer

    return [
        dataclasses.replace(gui_task, policies=[with_last_look(p) for p in gui_task.policies])
        for gui_task in [*writer.TASKS, *calc.TASKS, *impress.TASKS]
    ]

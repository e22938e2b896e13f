"""The GUI suite's tasks, one module per application: ``writer``, ``calc``, ``impress``."""

from __future__ import annotations

from suites.gui.spec import GuiTask


def all_tasks() -> list[GuiTask]:
    """Every task of the suite, Writer first, then Calc, then Impress."""
    from suites.gui.tasks import calc, impress, writer

    return [*writer.TASKS, *calc.TASKS, *impress.TASKS]

"""The screens replay saw at diverged steps, saved beside the reports for a person to review.

A kind hands the last screen it saw at a diverged step to replay
(``StepFidelity.keep_replayed_screen``); before the report is written, the screen is saved as
``screens/<trajectory id>/step_<index>.png`` in the output folder and the step's
``replayed_screen`` names it. Where the application only drew the same state another way, that
file is the variant to accept (``Observation.screenshot_variants``; docs/kinds/desktop.md)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from PIL import Image

from replay.report import FidelityReport
from storage.files import write_bytes_atomic

SCREENS_DIR = "screens"
"""The output folder's sub-folder for the screens of diverged steps."""


def save_diverged_screens(output: Path, report: FidelityReport) -> None:
    """Save each diverged step's kept screen as PNG under ``output`` and name it on the step;
    screens an earlier replay of the trajectory left there go first."""
    folder = output / SCREENS_DIR / report.trajectory_id
    shutil.rmtree(folder, ignore_errors=True)
    for step in report.steps:
        data = step.replayed_screen_data
        if data is None:
            continue
        target = folder / f"step_{step.index}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        with Image.open(io.BytesIO(data)) as image:
            image.save(buffer, format="PNG")
        write_bytes_atomic(target, buffer.getvalue())
        step.replayed_screen = target.relative_to(output).as_posix()
        step.keep_replayed_screen(None)

"""``keep_freed_buffers``: after it, screen-sized buffers made and dropped again and again are
reused instead of being faulted in anew each time. Measured in fresh interpreters, as the
setting is for the whole process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCREENSHOTS = Path(__file__).resolve().parents[2] / "datasets" / "gui" / "trajectories"
"""Recorded LibreOffice screens of the GUI dataset."""

ALLOCATIONS = r"""
import io, pathlib, resource, sys
from PIL import Image
from sandboxes.screens import REPLAY_SHIFT, compare_screens
if sys.argv[1] == "kept":
    from sandboxes.process_memory import keep_freed_buffers
    assert keep_freed_buffers()
def grey(data):
    saved = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("L").save(saved, "PPM")
    return saved.getvalue()
# As replay goes: each step's recorded screen (kept decoded for its next looks) and a look at
# the desktop in raw grey.
shots = sorted(pathlib.Path(sys.argv[2]).glob("*/step_*.png"))[:12]
steps = [(shot.read_bytes(), grey(shot.read_bytes())) for shot in shots]
def look():
    for recorded, replayed in steps:
        compare_screens(recorded, replayed, shift=REPLAY_SHIFT, fine=True)
for _ in range(3):
    look()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(3):
    look()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 36)
"""


def _faults_per_look(mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", ALLOCATIONS, mode, str(SCREENSHOTS)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


def test_freed_screen_buffers_are_reused_instead_of_faulted_in_again() -> None:
    # Each comparison makes screen-sized arrays (2 MB and more): fresh ones fault in page by page.
    assert _faults_per_look("plain") > 1000
    assert _faults_per_look("kept") < 50

"""Screens of diverged steps saved beside the reports, and runs that matched accepted variants
named on the replay's report line."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from agentjudge.replay_cli import report_line
from environments.steps import StepFidelity
from replay.diverged_screens import save_diverged_screens
from replay.report import FidelityReport


def _pgm(seed: int) -> tuple[bytes, np.ndarray]:
    pixels = np.random.default_rng(seed).integers(0, 256, size=(60, 80), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(buffer, format="PPM")  # grey: written as PGM
    return buffer.getvalue(), pixels


def test_a_diverged_steps_screen_is_saved_as_png_and_named_on_the_step(tmp_path: Path) -> None:
    diverged = StepFidelity(index=3, tool="PRESS", status="diverged")
    data, pixels = _pgm(3)
    assert data.startswith(b"P5")
    diverged.keep_replayed_screen(data)
    matched = StepFidelity(index=2, tool="PRESS", status="match", variant="run/step_2-wide.png")
    plain = StepFidelity(index=1, tool="PRESS", status="match")
    report = FidelityReport(
        trajectory_id="run-7",
        task_id="t",
        domain="gui",
        subdomain="word",
        backend="docker",
        verdict="diverged",
        steps=[plain, matched, diverged],
    )
    stale = tmp_path / "screens/run-7/step_9.png"  # from an earlier replay of the run
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    save_diverged_screens(tmp_path, report)
    assert [step.replayed_screen for step in report.steps] == [
        None,
        None,
        "screens/run-7/step_3.png",
    ]
    assert diverged.replayed_screen_data is None  # handed over, not held twice
    with Image.open(tmp_path / "screens/run-7/step_3.png") as saved:
        assert saved.format == "PNG"
        assert np.array_equal(np.asarray(saved), pixels)
    assert sorted(path.name for path in tmp_path.rglob("*.png")) == ["step_3.png"]
    # The report as written names the file; the image itself is not serialised.
    written = FidelityReport.model_validate_json(report.model_dump_json())
    assert written.steps[2].replayed_screen == "screens/run-7/step_3.png"
    assert "P5" not in report.model_dump_json()
    assert report.variant_steps == [2]
    assert report_line(report).endswith("[matched accepted variants at steps [2]]")

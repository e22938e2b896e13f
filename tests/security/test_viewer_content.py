"""The viewer serves nothing active from the data it shows, checked in headless Chromium over HTTP.

A dataset (or results folder) may hold an ``.svg`` or ``.html`` file, or a transcript image block
whose declared type is ``text/html``, carrying a script that posts a label correction through the
viewer's own API. Such files are refused (only raster images are served, typed by their bytes),
every answer carries ``nosniff`` and a Content-Security-Policy, and a write from another origin is
refused.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from dataset.store import load_dataset
from tests.replay.builders import FS_TASK, MINI
from tests.viewer.test_viewer_browser import chromium, running_viewer
from viewer.source import dataset_corrections_file

pytestmark = pytest.mark.slow

ATTACK = """
fetch('/api/corrections', {method: 'POST', headers: {'Content-Type': 'application/json'},
  body: JSON.stringify({trajectory_id: 'TRAJECTORY', label: 'PASS', note: 'planted'})})
  .then(answer => { document.title = 'posted ' + answer.status; });
"""


def _dataset(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "ds"
    shutil.copytree(
        MINI, root, ignore=shutil.ignore_patterns("android-*", "pg-*", "search-*", "word-*")
    )
    trajectory = next(
        t.id for t in load_dataset(root).trajectories.values() if t.task_id == FS_TASK
    )
    script = ATTACK.replace("TRAJECTORY", trajectory)
    folder = root / "trajectories" / trajectory
    folder.mkdir(exist_ok=True)
    (folder / "chart.svg").write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg"><script>{script}</script></svg>'
    )
    (folder / "notes.html").write_text(f"<html><body><script>{script}</script></body></html>")
    return root, trajectory


async def test_svg_and_html_files_from_a_dataset_never_run_on_the_viewers_origin(
    tmp_path: Path,
) -> None:
    root, trajectory = _dataset(tmp_path)
    corrections = dataset_corrections_file(root)
    async with running_viewer(root, tmp_path / "cache") as url, chromium() as page:
        for name in ("chart.svg", "notes.html"):
            answer = await page.goto(f"{url}files/trajectories/{trajectory}/{name}")
            assert answer is not None
            assert answer.status == 415, name
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert "sandbox" in answer.headers["content-security-policy"]
            await asyncio.sleep(1.0)
            assert not (await page.title()).startswith("posted"), name
        home = await page.goto(url)
        assert home is not None
        assert "default-src 'self'" in home.headers["content-security-policy"]
    assert not corrections.exists()


async def test_a_correction_from_another_origin_is_refused(tmp_path: Path) -> None:
    root, trajectory = _dataset(tmp_path)
    async with running_viewer(root, tmp_path / "cache") as url:
        request = urllib.request.Request(
            f"{url}api/corrections",
            data=json.dumps({"trajectory_id": trajectory, "label": "PASS"}).encode(),
            headers={"Content-Type": "application/json", "Origin": "http://pages.example"},
            method="POST",
        )

        def post() -> int:
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return int(response.status)
            except urllib.error.HTTPError as error:
                return error.code

        status = await asyncio.to_thread(post)
    assert status == 403
    assert not dataset_corrections_file(root).exists()

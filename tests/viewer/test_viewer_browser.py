"""The viewer driven in headless Chromium (Playwright with the system Chromium), as a reviewer
uses it: results folders made by a scripted-model grid over the DS suite and the mini example
(GUI and mobile steps with screenshots), the table filtered to wrong verdicts, a run opened, a
``VIEW_TRAJECTORY_STEP`` link followed to its step, a label correction recorded and read back
from the correction file, screenshots and trees on the mini's GUI and mobile runs, the
comparison page and the report's transcript URL.

Run pages are saved as screenshots under ``test-output/viewer/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page

from bench.evaluate import report_folder
from bench.grid_runner import run_key
from bench.results import read_predictions
from dataset.store import load_dataset
from replay.report import FidelityReport, StepFidelity
from tests.bench.chromium import INSTALL_HINT, chromium_path
from tests.viewer.results import (
    DS,
    DS_AGENT_RUNS,
    MINI,
    MINI_AGENT_RUNS,
    VIEWED_STEP,
    make_results,
)
from viewer.server import bind_socket, build_app, open_viewer, serve
from viewer.source import open_source

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-output" / "viewer"
MODEL = "mock/viewer-test"

pytestmark = pytest.mark.slow


@contextlib.asynccontextmanager
async def running_viewer(
    folder: Path, cache: Path, replay: Path | None = None
) -> AsyncIterator[str]:
    """The viewer over ``folder``, served in this event loop; yields its URL."""
    viewer = open_viewer(open_source(folder, replay=replay), cache)
    assert viewer.index.wait(30), "the index was not read"
    sock = bind_socket(0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    task = asyncio.create_task(serve(build_app(viewer), sock))
    try:
        yield url
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Page]:
    from playwright.async_api import async_playwright

    executable = chromium_path()
    if executable is None:
        pytest.fail(INSTALL_HINT)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        try:
            yield await browser.new_page(viewport={"width": 1400, "height": 900})
        finally:
            await browser.close()


async def _wait_until(page: Page, expression: str, arg: object = None) -> None:
    """Poll ``expression`` by DevTools evaluation, which the viewer's Content-Security-Policy
    does not govern (Playwright's ``wait_for_function`` polls with ``eval``, which it forbids)."""
    for _ in range(300):
        if await page.evaluate(expression, arg):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never became true in 30 s: {expression}")


async def _loaded(page: Page) -> None:
    await page.wait_for_selector("body[data-loaded='1']")


async def _count_text(page: Page) -> str:
    return str(await page.locator("#pager .count").inner_text())


async def test_review_a_wrong_verdict_follow_its_step_and_correct_the_label(tmp_path: Path) -> None:
    results = await make_results(DS, tmp_path / "ds", DS_AGENT_RUNS)
    report_folder(results, replicates=20)
    labels = {
        trajectory.id: trajectory.label.value
        for trajectory in load_dataset(DS).trajectories.values()
        if trajectory.label is not None
    }
    total = len(labels) + len(DS_AGENT_RUNS)
    # The script answers FAIL without tools and PASS with them.
    wrong = sum(label == "PASS" for label in labels.values()) + sum(
        labels[name] == "FAIL" for name in DS_AGENT_RUNS
    )
    target = next(name for name in sorted(DS_AGENT_RUNS) if labels[name] == "FAIL")
    target_key = run_key(target, "agent", 2, MODEL, 1)

    async with running_viewer(results, tmp_path / "cache") as url, chromium() as page:
        await page.goto(url)
        await _loaded(page)
        assert await _count_text(page) == f"rows 1\u2013100 of {total}"
        assert await page.locator("#runs tbody tr").count() == 100

        await page.check("#only-wrong")
        await _wait_until(
            page, f"document.querySelector('#pager .count').textContent.endsWith('of {wrong}')"
        )
        rows = page.locator("#runs tbody tr")
        assert await rows.count() == min(wrong, 100)
        assert await page.locator("#runs tbody tr:not(.wrong)").count() == 0

        await page.select_option("#filter-mode", "agent")
        agent_wrong = sum(labels[name] == "FAIL" for name in DS_AGENT_RUNS)
        await _wait_until(
            page,
            f"document.querySelector('#pager .count').textContent.endsWith('of {agent_wrong}')",
        )
        assert "wrong=1" in page.url
        assert "mode=agent" in page.url
        await page.click(f"tr[data-key='{target_key}'] a.run-link")
        await _loaded(page)
        assert page.url.endswith(f"/run/{target_key}")
        assert await page.locator("#verdict-panel h2").inner_text() == "Verdict (wrong)"

        link = page.locator("a.step-link")
        assert await link.count() == 1
        assert await link.inner_text() == f"→ step {VIEWED_STEP}"
        await link.click()
        step = page.locator(f"#step-{VIEWED_STEP}")
        await _wait_until(
            page, f"document.getElementById('step-{VIEWED_STEP}').classList.contains('flash')"
        )
        assert page.url.endswith(f"#step-{VIEWED_STEP}")
        box = await step.bounding_box()
        assert box is not None
        assert 0 <= box["y"] < 900  # scrolled into view
        assert (await step.locator("h3").inner_text()).startswith(f"Step {VIEWED_STEP} ·")

        assert await page.input_value("#correction-label") == "PASS"
        await page.fill("#correction-note", "the index does list every dashed file")
        await page.fill("#correction-reviewer", "tester")
        await page.click("#correction-submit")
        await page.wait_for_selector("#correction-status .notice")
        await page.screenshot(path=str(SCREENSHOTS / "run-page.png"), full_page=False)

        corrections = results / "label_corrections.jsonl"
        lines = [json.loads(line) for line in corrections.read_text(encoding="utf-8").splitlines()]
        assert len(lines) == 1
        assert {
            key: lines[0][key] for key in ("trajectory_id", "item_id", "label", "previous")
        } == {
            "trajectory_id": target,
            "item_id": None,
            "label": "PASS",
            "previous": "FAIL",
        }
        assert lines[0]["note"] == "the index does list every dashed file"
        assert lines[0]["reviewer"] == "tester"

        # The table now scores against the corrected label: the agent run is right, and the
        # llm run of the same trajectory (FAIL) is wrong.
        await page.goto(url + "?wrong=1")
        await _loaded(page)
        await _wait_until(
            page, f"document.querySelector('#pager .count').textContent.endsWith('of {wrong}')"
        )
        llm_key = run_key(target, "llm", 0, MODEL, 1)
        await page.fill("#search", target)
        await page.dispatch_event("#search", "change")
        await _wait_until(
            page, "document.querySelector('#pager .count').textContent.endsWith('of 1')"
        )
        assert await page.locator(f"tr[data-key='{llm_key}']").count() == 1

        # The comparison page puts the two runs of the trajectory side by side.
        await page.goto(f"{url}compare?a={target_key}&b={llm_key}")
        await _loaded(page)
        assert "agent T=2" in await page.locator("#verdict-a h2").inner_text()
        assert "llm" in await page.locator("#verdict-b h2").inner_text()
        assert await page.locator("#transcript-a a.step-link").count() == 1

        # The report's transcript links (logs/<key>.jsonl), opened through the viewer, land on
        # the run page.
        await page.goto(f"{url}report.html")
        first = page.locator("#wrong-verdicts tbody tr").first
        trajectory_id = await first.locator("td").nth(1).inner_text()
        link = first.locator("a")
        key = (await link.inner_text()).removeprefix("logs/").removesuffix(".jsonl")
        await link.click()
        await _loaded(page)
        assert page.url.endswith(f"/run/{key}")
        assert (await page.locator("#title").inner_text()).startswith(f"{trajectory_id} · ")

    # Scoring applies the file: the bench's predictions carry the corrected label.
    corrected = [p for p in read_predictions(results, corrections) if p.trajectory_id == target]
    assert {p.label for p in corrected} == {"PASS"}
    assert {p.label for p in read_predictions(results) if p.trajectory_id == target} == {"FAIL"}


async def test_gui_and_mobile_steps_show_screenshots_trees_and_zoom(tmp_path: Path) -> None:
    results = await make_results(MINI, tmp_path / "mini", MINI_AGENT_RUNS)
    mini = load_dataset(MINI)
    mobile = "android-markor-shopping-note--wrong-name-fail"
    gui = "word-memo-q4-update--c13-pass"
    replay = tmp_path / "replay"
    replay.mkdir()
    report = FidelityReport(
        trajectory_id=mobile,
        task_id="android-markor-shopping-note",
        domain="mobile",
        subdomain="android",
        backend="local",
        verdict="diverged",
        steps=[
            StepFidelity(index=1, tool="open_app", status="match"),
            StepFidelity(index=2, tool="click", status="diverged", diff="-Name\n+Title"),
        ],
    )
    (replay / "fidelity.jsonl").write_text(report.model_dump_json() + "\n", encoding="utf-8")
    async with running_viewer(results, tmp_path / "cache", replay) as url, chromium() as page:
        for trajectory_id, key in (
            (mobile, run_key(mobile, "agent", 2, MODEL, 1)),
            (gui, run_key(gui, "llm", 0, MODEL, 1)),
        ):
            steps = mini.trajectories[trajectory_id].steps
            await page.goto(f"{url}run/{key}")
            await _loaded(page)
            shots = page.locator("img.shot")
            assert await shots.count() == len(steps)
            assert await shots.first.get_attribute("loading") == "lazy"
            for position in range(len(steps)):
                shot = shots.nth(position)
                await shot.scroll_into_view_if_needed()
                await _wait_until(
                    page,
                    "image => image.complete && image.naturalWidth > 0",
                    arg=await shot.element_handle(),
                )
            if trajectory_id == mobile:  # its replay report: step 2 diverged
                assert await page.locator(".step.diverged").count() == 1
                assert await page.locator("#step-2.diverged").count() == 1
                assert await page.locator("#fidelity-steps tbody tr.wrong").count() == 1
                assert "+Title" in await page.locator("#step-2").inner_text()
            else:
                assert "No replay report" in await page.locator("#fidelity").inner_text()
            trees = page.locator("details.tree")
            assert await trees.count() == len(steps)
            tree = trees.first
            assert not await tree.locator("pre").is_visible()
            await tree.locator("summary").click()
            assert await tree.locator("pre").is_visible()
            await shots.first.click()
            assert await page.locator(".zoom img").count() == 1
            await page.locator(".zoom").click()
            assert await page.locator(".zoom").count() == 0
            await page.screenshot(
                path=str(SCREENSHOTS / f"run-page-{trajectory_id}.png"), full_page=False
            )

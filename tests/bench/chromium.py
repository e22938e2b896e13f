"""Test helper: open an HTML file in headless Chromium and report what a reader would see.

Uses the Python ``playwright`` package with the system Chromium (playwright's own browsers are
not needed), so tests can check that tables, images and text really render.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from settings import get_settings, variable_name

__all__ = ["INSTALL_HINT", "ImageSize", "RenderedPage", "chromium_path", "render_in_chromium"]

CHROMIUM_ENV = variable_name("chromium")
"""Environment variable naming the Chromium binary to use."""

INSTALL_HINT = (
    "Chromium not found: install it with `apt-get install chromium` (Debian/Ubuntu) or point "
    f"{CHROMIUM_ENV} at a Chromium or Chrome binary."
)

_COLLECT = """() => ({
  title: document.title,
  text: document.body ? document.body.innerText : "",
  tables: Array.from(document.querySelectorAll("table[id]")).map(table => ({
    id: table.id,
    rows: Array.from(table.tBodies).reduce((count, body) => count + body.rows.length, 0),
  })),
  images: Array.from(document.images).filter(image => image.id).map(image => ({
    id: image.id, width: image.naturalWidth, height: image.naturalHeight,
  })),
})"""


@dataclass(frozen=True)
class ImageSize:
    """An image's decoded size in pixels (0 by 0 when it failed to load)."""

    width: int
    height: int


@dataclass(frozen=True)
class RenderedPage:
    """What Chromium rendered."""

    title: str
    """``document.title``."""
    text: str
    """``document.body.innerText``: the visible text."""
    table_rows: dict[str, int]
    """Each table with an ``id``: its number of body rows (rows inside ``<tbody>``)."""
    images: dict[str, ImageSize]
    """Each image with an ``id``: its ``naturalWidth`` and ``naturalHeight``."""
    screenshot: Path
    """The full-page PNG screenshot."""

    @property
    def table_ids(self) -> list[str]:
        """Ids of the tables, in page order."""
        return list(self.table_rows)


def chromium_path() -> str | None:
    """The Chromium binary to use: ``$AGENTJUDGE_CHROMIUM``, else ``/usr/bin/chromium``, else
    ``chromium`` on the PATH; None when there is none."""
    configured = get_settings().chromium
    if configured is not None:
        return str(configured) if configured.is_file() else None
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


async def render_in_chromium(html_path: Path, screenshot_path: Path) -> RenderedPage:
    """Open ``html_path`` in headless Chromium, wait for it and its images to load, save a
    full-page screenshot to ``screenshot_path`` and return the page's tables, images, title and
    visible text. Raises ``RuntimeError`` when Chromium cannot be found."""
    from playwright.async_api import async_playwright

    executable = chromium_path()
    if executable is None:
        raise RuntimeError(INSTALL_HINT)
    screenshot_path.parent.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            await page.goto(html_path.resolve().as_uri(), wait_until="load")
            await page.wait_for_function(
                "Array.from(document.images).every(image => image.complete)"
            )
            await page.screenshot(path=str(screenshot_path), full_page=True)
            found: dict[str, Any] = await page.evaluate(_COLLECT)
        finally:
            await browser.close()
    return RenderedPage(
        title=str(found["title"]),
        text=str(found["text"]),
        table_rows={str(table["id"]): int(table["rows"]) for table in found["tables"]},
        images={
            str(image["id"]): ImageSize(int(image["width"]), int(image["height"]))
            for image in found["images"]
        },
        screenshot=screenshot_path,
    )

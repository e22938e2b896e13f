"""Assembles a bench report's pages and writes the report folder.

Owns the Markdown page, the self-contained HTML page (with the stylesheet ``report.css`` of this
package inlined and the plots embedded), and the report folder (``report.md``, ``report.html``,
``report.json``, ``plots/*.png``). Both pages are made of the same blocks
(``bench.report.sections.document``), so they show the same content in the same order. Decides
nothing about content.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bench.plots import PLOTS
from bench.report.blocks import html_text
from bench.report.sections import document
from bench.scores import BenchReport
from storage.files import write_bytes_atomic

STYLESHEET = "report.css"
"""The HTML page's stylesheet, a resource of this package."""


class ReportFiles(BaseModel):
    """Where ``write_report`` put the report."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    markdown: Path
    """``report.md``."""
    html: Path
    """``report.html`` (plots embedded)."""
    json_file: Path
    """``report.json``: the ``BenchReport`` model dump."""
    plots: dict[str, Path]
    """Each figure's PNG under ``plots/``, by name."""


def render_markdown(report: BenchReport, plot_files: dict[str, str] | None = None) -> str:
    """The report as Markdown. ``plot_files`` maps each plot name (``bench.plots.PLOTS``) to
    its path relative to the Markdown file; a plot without one is named in a sentence instead
    of an image."""
    files = plot_files or {}
    return "\n\n".join(block.markdown(files) for block in document(report)) + "\n"


@cache
def _stylesheet() -> str:
    package = __package__ or "bench.report"
    return resources.files(package).joinpath(STYLESHEET).read_text(encoding="utf-8")


def _html(report: BenchReport, pngs: Mapping[str, bytes]) -> str:
    body = "\n".join(block.html(pngs) for block in document(report))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html_text(report.title)}</title>\n<style>\n{_stylesheet()}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _draw(report: BenchReport) -> dict[str, bytes]:
    return {name: draw(report) for name, draw in PLOTS.items()}


def render_html(report: BenchReport) -> str:
    """The report as one self-contained HTML page: inline CSS, plots embedded as base64 PNG
    ``data:`` images, no script and no external URL; every table and plot has a stable ``id``."""
    return _html(report, _draw(report))


def write_report(report: BenchReport, folder: Path) -> ReportFiles:
    """Write ``report.md``, ``report.html``, ``report.json`` and ``plots/<name>.png`` into
    ``folder`` (created if needed), each atomically; the Markdown links the PNGs, the HTML
    embeds them."""
    plots_folder = folder / "plots"
    plots_folder.mkdir(parents=True, exist_ok=True)
    pngs = _draw(report)
    plots: dict[str, Path] = {}
    for name, png in pngs.items():
        plots[name] = plots_folder / f"{name}.png"
        write_bytes_atomic(plots[name], png)
    relative = {name: f"plots/{path.name}" for name, path in plots.items()}
    files = ReportFiles(
        markdown=folder / "report.md",
        html=folder / "report.html",
        json_file=folder / "report.json",
        plots=plots,
    )
    write_bytes_atomic(files.json_file, (report.model_dump_json(indent=2) + "\n").encode())
    write_bytes_atomic(files.markdown, render_markdown(report, relative).encode())
    write_bytes_atomic(files.html, _html(report, pngs).encode())
    return files

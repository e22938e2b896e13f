"""The bench report: renders a scored ``BenchReport`` as Markdown and as one self-contained HTML
page, and writes the report folder (``report.md``, ``report.html``, ``report.json``,
``plots/*.png``).

Owns presentation only: every number is read from the report, never computed here. The modules:
``blocks`` (number formatting, escaping, and the blocks a page is made of), ``sections`` (what
each section of the report says, as blocks) and ``render`` (the two pages and the files);
``report.css`` is the HTML page's stylesheet.
"""

from bench.report.blocks import format_interval, format_number
from bench.report.render import ReportFiles, render_html, render_markdown, write_report
from bench.report.sections import WRONG_VERDICT_LIMIT

__all__ = [
    "WRONG_VERDICT_LIMIT",
    "ReportFiles",
    "format_interval",
    "format_number",
    "render_html",
    "render_markdown",
    "write_report",
]

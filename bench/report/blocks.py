"""The building blocks of a bench report page, each able to write itself as Markdown and as HTML.

Owns number formatting (values, intervals, p-values, costs), escaping for Markdown and HTML, and
the block types a report is made of (headings, paragraphs, callouts, term lists, tables, plots).
Knows nothing about which sections a report has or what their numbers mean: that is
``bench.report.sections``.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from bench.scores import Interval, RunSpread

DASH = "\u2013"
"""Shown for a value that does not exist."""

DETAIL_CHARS = 200
"""Characters of free text a table cell shows at most (see ``shorten``)."""


# ---------------------------------------------------------------------------------------------
# Formatting numbers.


def format_number(value: float | None, digits: int = 3) -> str:
    """A value with fixed decimals, or a dash when it does not exist."""
    return DASH if value is None else f"{value:.{digits}f}"


def format_interval(value: float | None, interval: Interval | None, *, signed: bool = False) -> str:
    """A value with its interval, e.g. ``0.812 [0.70, 0.90]``; a dash when there is no value,
    the bare value when there is no interval; ``signed`` prints ``+`` on differences."""
    if value is None:
        return DASH
    sign = "+" if signed else ""
    text = f"{value:{sign}.3f}"
    if interval is not None:
        text += f" [{interval.low:{sign}.2f}, {interval.high:{sign}.2f}]"
    return text


def format_signed(value: float | None) -> str:
    """A difference with its sign, e.g. ``+0.125``; a dash when it does not exist."""
    return DASH if value is None else f"{value:+.3f}"


def format_p_value(value: float | None) -> str:
    """A p-value with three decimals, ``<0.001`` below that; a dash when it does not exist."""
    if value is None:
        return DASH
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def format_spread(spread: RunSpread | None) -> str:
    """Avg@k as ``mean ± std [t-interval] (k=…)``; a dash for a single run."""
    if spread is None or spread.runs <= 1:
        return DASH
    text = f"{spread.mean:.3f}"
    if spread.std is not None:
        text += f" ± {spread.std:.3f}"
    if spread.interval is not None:
        text += f" [{spread.interval.low:.2f}, {spread.interval.high:.2f}]"
    return text + f" (k={spread.runs})"


def format_cost(value: float | None) -> str:
    """Dollars with four decimals (scientific below $0.0001), or ``unknown``."""
    if value is None:
        return "unknown"
    if value == 0 or value >= 0.0001:
        return f"${value:.4f}"
    return f"${value:.1e}"


def shorten(text: str | None, limit: int = DETAIL_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis; "" for no text."""
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Escaping.

_MD_ESCAPES = str.maketrans({char: "\\" + char for char in "\\|*`"})
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")
"""A ``<`` that could open raw HTML (``<0.001`` cannot)."""


def markdown_text(text: str) -> str:
    """Plain text safe in Markdown (and in a table cell: one line, no bare pipes or HTML)."""
    return _MD_TAG.sub(r"\\<", " ".join(text.split()).translate(_MD_ESCAPES))


def html_text(text: str) -> str:
    """Plain text safe in HTML content and in a quoted attribute value."""
    return html.escape(text, quote=True)


# ---------------------------------------------------------------------------------------------
# The blocks.


@dataclass(frozen=True)
class Link:
    """A table cell linking ``text`` to ``href`` (a URL already quoted)."""

    text: str
    href: str


Cell = str | Link
"""One table cell: plain text or a link."""

_NUMBER = re.compile(f"^(?:[-+<$\u2212]?\\d|{DASH}$)")
"""A cell the HTML table right-aligns: a number, a p-value, a cost, or a dash."""


def _md_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f"[{markdown_text(cell.text)}]({cell.href})"
    return markdown_text(cell) if cell else " "


def _html_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f'<a href="{html_text(cell.href)}">{html_text(cell.text)}</a>'
    return html_text(cell)


@dataclass(frozen=True)
class Heading:
    """A section heading with a stable HTML ``id``."""

    text: str
    level: int
    id: str

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        return "#" * self.level + " " + markdown_text(self.text)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        tag = f"h{self.level}"
        return f'<{tag} id="{html_text(self.id)}">{html_text(self.text)}</{tag}>'


@dataclass(frozen=True)
class Para:
    """A paragraph of plain text, with an optional CSS class in HTML."""

    text: str
    css_class: str = ""

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        return markdown_text(self.text)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        attributes = f' class="{html_text(self.css_class)}"' if self.css_class else ""
        return f"<p{attributes}>{html_text(self.text)}</p>"


@dataclass(frozen=True)
class Callout:
    """A titled list drawn apart from the text (a quote in Markdown, a note box in HTML)."""

    title: str
    items: list[str]

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        lines = [f"> **{markdown_text(self.title)}**", ">"]
        lines.extend(f"> - {markdown_text(item)}" for item in self.items)
        return "\n".join(lines)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        items = "".join(f"<li>{html_text(item)}</li>" for item in self.items)
        return (
            f'<div class="callout" role="note"><strong>{html_text(self.title)}</strong>'
            f"<ul>{items}</ul></div>"
        )


@dataclass(frozen=True)
class Terms:
    """Terms and their explanations."""

    items: list[tuple[str, str]]

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        return "\n".join(
            f"- **{markdown_text(term)}**: {markdown_text(text)}" for term, text in self.items
        )

    def html(self, pngs: Mapping[str, bytes]) -> str:
        items = "".join(
            f"<dt>{html_text(term)}:</dt><dd>{html_text(text)}</dd>" for term, text in self.items
        )
        return f"<dl>{items}</dl>"


@dataclass(frozen=True)
class Table:
    """A table with a stable HTML ``id``; numeric cells are right-aligned in HTML."""

    id: str
    header: list[str]
    rows: list[list[Cell]]
    emphasis: frozenset[int] = field(default_factory=frozenset)
    """Row indexes drawn apart (the Improvement rows)."""

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        lines = [
            "| " + " | ".join(markdown_text(name) for name in self.header) + " |",
            "|" + "|".join("---" for _ in self.header) + "|",
        ]
        lines.extend("| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in self.rows)
        return "\n".join(lines)

    def html(self, pngs: Mapping[str, bytes]) -> str:
        head = "".join(f'<th scope="col">{html_text(name)}</th>' for name in self.header)
        body: list[str] = []
        for index, row in enumerate(self.rows):
            attributes = ' class="emphasis"' if index in self.emphasis else ""
            cells = "".join(
                f'<td class="num">{_html_cell(cell)}</td>'
                if isinstance(cell, str) and _NUMBER.match(cell)
                else f"<td>{_html_cell(cell)}</td>"
                for cell in row
            )
            body.append(f"<tr{attributes}>{cells}</tr>")
        return (
            f'<div class="scroll"><table id="{html_text(self.id)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )


@dataclass(frozen=True)
class Plot:
    """A figure of ``bench.plots.PLOTS`` by name: a linked PNG in Markdown, embedded in HTML."""

    id: str
    name: str
    alt: str

    def markdown(self, plot_files: Mapping[str, str]) -> str:
        path = plot_files.get(self.name)
        if path is None:
            return (
                f"Plot not written here: report.html embeds it, and write_report saves it as "
                f"plots/{markdown_text(self.name)}.png."
            )
        alt = markdown_text(self.alt).replace("[", "(").replace("]", ")")
        return f"![{alt}]({quote(path, safe='/')})"

    def html(self, pngs: Mapping[str, bytes]) -> str:
        png = pngs.get(self.name)
        if png is None:
            return f"<p>Plot not drawn: {html_text(self.alt)}</p>"
        data = base64.b64encode(png).decode("ascii")
        return (
            f'<figure><img id="{html_text(self.id)}" src="data:image/png;base64,{data}" '
            f'alt="{html_text(self.alt)}"></figure>'
        )


Block = Heading | Para | Callout | Terms | Table | Plot
"""Anything a report page is made of. Each renders with ``markdown(plot_files)``, where
``plot_files`` maps a plot name to its path relative to the page, and ``html(pngs)``, where
``pngs`` maps a plot name to its PNG bytes."""

"""Deterministic office documents: the starting files of the GUI tasks.

python-docx, openpyxl and python-pptx stamp the time of saving into the core properties and
into every zip entry, so the same code would give different bytes on every build. Each builder
here fixes the core properties, then ``stable_zip`` rewrites the package with fixed entry dates
(the entries' order and contents untouched), so a rebuild gives identical bytes.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

import docx
import openpyxl
import pptx
from docx.enum.text import WD_ALIGN_PARAGRAPH
from openpyxl.styles import Font
from pptx.util import Emu

__all__ = [
    "FIXED_TIME",
    "Paragraph",
    "SlideSpec",
    "presentation",
    "stable_zip",
    "word_document",
    "workbook",
]

FIXED_TIME = datetime(2026, 1, 5, 9, 0, 0)
"""The creation and modification time written into every generated document."""
ZIP_TIME = (2026, 1, 5, 9, 0, 0)
"""The date of every zip entry."""
AUTHOR = "agentjudge suite"


_MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")
FIXED_STAMP = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()


def stable_zip(data: bytes) -> bytes:
    """``data`` (an OOXML zip) rewritten with fixed entry dates, deflate at one level, and the
    core properties' modification time fixed (openpyxl stamps the time of saving over the one
    it was given)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = _MODIFIED.sub(rb"\g<1>" + FIXED_STAMP + rb"\g<2>", body)
            entry = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            target.writestr(entry, body, compresslevel=6)
    return out.getvalue()


def _saved(save: Callable[[io.BytesIO], None]) -> bytes:
    buffer = io.BytesIO()
    save(buffer)
    return stable_zip(buffer.getvalue())


class Paragraph:
    """One paragraph of a generated Word document."""

    def __init__(
        self, text: str, *, style: str | None = None, bold: bool = False, center: bool = False
    ) -> None:
        self.text = text
        """Its text (one run)."""
        self.style = style
        """A built-in paragraph style name, e.g. ``Heading 1``; None for the normal style."""
        self.bold = bold
        """Whether its run is bold."""
        self.center = center
        """Whether it is centred."""


def word_document(
    paragraphs: Sequence[Paragraph],
    *,
    table: Sequence[Sequence[str]] | None = None,
    table_after: int = 0,
) -> bytes:
    """A .docx holding ``paragraphs``, the same bytes every time. ``table`` adds a bordered
    table of those rows of cell texts after the first ``table_after`` paragraphs."""
    document = docx.Document()
    for index, spec in enumerate(paragraphs):
        if table is not None and index == table_after:
            _add_table(document, table)
        paragraph = document.add_paragraph(style=spec.style)
        run = paragraph.add_run(spec.text)
        if spec.bold:
            run.bold = True
        if spec.center:
            paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    if table is not None and table_after >= len(paragraphs):
        _add_table(document, table)
    properties = document.core_properties
    properties.author = properties.last_modified_by = AUTHOR
    properties.created = properties.modified = FIXED_TIME
    properties.revision = 1
    return _saved(document.save)


def _add_table(document: docx.document.Document, rows: Sequence[Sequence[str]]) -> None:
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    table.style = document.styles["Table Grid"]
    for cells, texts in zip(table.rows, rows, strict=True):
        for cell, text in zip(cells.cells, texts, strict=True):
            cell.text = text


SHEET_ZOOM = 200
"""The zoom every generated sheet opens at: a quarter of the cells on screen, so a Calc
accessibility tree (one node per visible cell) stays small."""


def workbook(
    sheets: Mapping[str, Sequence[Sequence[object]]], *, bold_header: bool = False
) -> bytes:
    """An .xlsx with one sheet per entry (rows from A1) shown at ``SHEET_ZOOM`` percent, the
    same bytes every time; the first sheet is the active one."""
    book = openpyxl.Workbook()
    first = book.active
    assert first is not None
    book.remove(first)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(list(row))
        if bold_header:
            for cell in sheet[1]:
                cell.font = Font(bold=True)
        sheet.column_dimensions["A"].width = 16
        sheet.sheet_view.zoomScale = SHEET_ZOOM
    book.active = 0
    book.properties.creator = book.properties.lastModifiedBy = AUTHOR
    book.properties.created = book.properties.modified = FIXED_TIME
    return _saved(book.save)


class SlideSpec:
    """One slide of a generated presentation (layout "Title and Content")."""

    def __init__(self, title: str, bullets: Sequence[str] = ()) -> None:
        self.title = title
        """The title placeholder's text."""
        self.bullets = list(bullets)
        """The body placeholder's paragraphs (none: the body is removed)."""


def presentation(slides: Sequence[SlideSpec], *, box: tuple[str, int, int] | None = None) -> bytes:
    """A .pptx with ``slides``, the same bytes every time. ``box`` adds a text box
    ``(text, left, top)`` (EMU) to the first slide."""
    deck = pptx.Presentation()
    for spec in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        assert slide.shapes.title is not None
        slide.shapes.title.text = spec.title
        body = slide.placeholders[1]
        if spec.bullets:
            frame = body.text_frame
            frame.text = spec.bullets[0]
            for bullet in spec.bullets[1:]:
                frame.add_paragraph().text = bullet
        else:
            element = body._element  # python-pptx has no public removal
            element.getparent().remove(element)
    if box is not None:
        text, left, top = box
        shape = deck.slides[0].shapes.add_textbox(Emu(left), Emu(top), Emu(2743200), Emu(457200))
        shape.text_frame.text = text
    properties = deck.core_properties
    properties.author = properties.last_modified_by = AUTHOR
    properties.created = properties.modified = FIXED_TIME
    properties.revision = 1
    return _saved(deck.save)

"""The GUI suite's verifiers on documents edited here with python-docx, openpyxl and python-pptx
(no desktop): each passes the document the task asks for, and fails the starting document and
the failure each task's scripts exercise (wrong target, partial change)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.text.paragraph import Paragraph as DocxParagraph
from openpyxl.styles import Font
from pptx.shapes.base import BaseShape
from pptx.util import Emu

from suites.gui.spec import GuiTask
from suites.gui.tasks import all_tasks
from suites.gui.tasks.calc import ITEMS, UNITS

TASKS = {gui_task.task.id: gui_task for gui_task in all_tasks()}

Edit = Callable[[bytes], bytes]


def _word(edit: Callable[[docx.document.Document], None]) -> Edit:
    def apply(data: bytes) -> bytes:
        document = docx.Document(io.BytesIO(data))
        edit(document)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    return apply


def _book(edit: Callable[[openpyxl.Workbook], None]) -> Edit:
    def apply(data: bytes) -> bytes:
        book = openpyxl.load_workbook(io.BytesIO(data))
        edit(book)
        out = io.BytesIO()
        book.save(out)
        return out.getvalue()

    return apply


def _deck(edit: Callable[[pptx.presentation.Presentation], None]) -> Edit:
    def apply(data: bytes) -> bytes:
        deck = pptx.Presentation(io.BytesIO(data))
        edit(deck)
        out = io.BytesIO()
        deck.save(out)
        return out.getvalue()

    return apply


def _bold_runs(paragraph: DocxParagraph, words: int | None = None) -> None:
    """Bold the paragraph, or only its first ``words`` words (split into two runs)."""
    text = paragraph.text
    for run in list(paragraph.runs):
        run._element.getparent().remove(run._element)
    if words is None:
        paragraph.add_run(text).bold = True
        return
    head = " ".join(text.split(" ")[:words]) + " "
    paragraph.add_run(head).bold = True
    paragraph.add_run(text[len(head) :])


def _underline(paragraph: DocxParagraph) -> None:
    for run in paragraph.runs:
        run.underline = True


def _set_text(paragraph: DocxParagraph, text: str) -> None:
    paragraph.runs[0].text = text
    for run in paragraph.runs[1:]:
        run.text = ""


def _with_results(edit: Edit, results: dict[str, float]) -> Edit:
    """``edit``, then each formula's result cached in the sheet's XML as LibreOffice saves it
    (openpyxl writes formulas with an empty cached value); ``results`` maps formula text
    without its ``=`` to the result."""

    def apply(data: bytes) -> bytes:
        edited = zipfile.ZipFile(io.BytesIO(edit(data)))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as target:
            for info in edited.infolist():
                body = edited.read(info.filename)
                if info.filename.startswith("xl/worksheets/"):
                    text = body.decode()
                    for formula, value in results.items():
                        text = text.replace(
                            f"<f>{formula}</f><v></v>", f"<f>{formula}</f><v>{value}</v>"
                        )
                    body = text.encode()
                target.writestr(info, body)
        return out.getvalue()

    return apply


def _title(deck: pptx.presentation.Presentation, slide: int, text: str) -> None:
    title = deck.slides[slide].shapes.title
    assert title is not None
    title.text_frame.paragraphs[0].runs[0].text = text


def _callout(deck: pptx.presentation.Presentation) -> BaseShape:
    shapes: list[Any] = list(deck.slides[0].shapes)
    found: BaseShape = next(
        s for s in shapes if s.has_text_frame and s.text_frame.text.startswith("Call")
    )
    return found


def _new_slide(position: int) -> Callable[[pptx.presentation.Presentation], None]:
    def edit(deck: pptx.presentation.Presentation) -> None:
        slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
        assert slide.shapes.title is not None
        slide.shapes.title.text = "Questions"
        order = deck.slides._sldIdLst
        moved = order[-1]
        order.remove(moved)
        order.insert(position, moved)

    return edit


def _bullet(slide: int) -> Callable[[pptx.presentation.Presentation], None]:
    def edit(deck: pptx.presentation.Presentation) -> None:
        body = deck.slides[slide].placeholders[1]
        body.text_frame.add_paragraph().text = "Contingency"

    return edit


def _move(dx: int, dy: int) -> Callable[[pptx.presentation.Presentation], None]:
    def edit(deck: pptx.presentation.Presentation) -> None:
        box = _callout(deck)
        box.left = Emu(int(box.left or 0) + dx)
        box.top = Emu(int(box.top or 0) + dy)

    return edit


def _bold_shape(
    pick: Callable[[pptx.presentation.Presentation], BaseShape],
    words: int | None = None,
) -> Callable[[pptx.presentation.Presentation], None]:
    def edit(deck: pptx.presentation.Presentation) -> None:
        shape = pick(deck)
        paragraph = shape.text_frame.paragraphs[0]  # type: ignore[attr-defined]
        text = paragraph.text
        for run in list(paragraph.runs):
            run._r.getparent().remove(run._r)
        if words is None:
            run = paragraph.add_run()
            run.text = text
            run.font.bold = True
            return
        head = text.split(" ")[0] + " "
        first = paragraph.add_run()
        first.text = head
        first.font.bold = True
        rest = paragraph.add_run()
        rest.text = text[len(head) :]

    return edit


def _first_title(deck: pptx.presentation.Presentation) -> BaseShape:
    title: BaseShape | None = deck.slides[0].shapes.title
    assert title is not None
    return title


def _sheet_bold(sheet: str, cells: list[str]) -> Callable[[openpyxl.Workbook], None]:
    def edit(book: openpyxl.Workbook) -> None:
        for cell in cells:
            book[sheet][cell].font = Font(bold=True)

    return edit


def _percent(cells: list[str]) -> Callable[[openpyxl.Workbook], None]:
    def edit(book: openpyxl.Workbook) -> None:
        for cell in cells:
            book["Shares"][cell].number_format = "0%"

    return edit


def _values(sheet: str, values: dict[str, Any]) -> Callable[[openpyxl.Workbook], None]:
    def edit(book: openpyxl.Workbook) -> None:
        for cell, value in values.items():
            book[sheet][cell] = value

    return edit


def _paragraph_edit(index: int, change: Callable[[DocxParagraph], None]) -> Edit:
    return _word(lambda document: change(document.paragraphs[index]))


def _style(index: int) -> Edit:
    def edit(document: docx.document.Document) -> None:
        document.paragraphs[index].style = document.styles["Heading 1"]

    return _word(edit)


def _align(index: int) -> Edit:
    def edit(document: docx.document.Document) -> None:
        document.paragraphs[index].alignment = WD_ALIGN_PARAGRAPH.CENTER

    return _word(edit)


def _append(text: str, new_paragraph: bool) -> Edit:
    def edit(document: docx.document.Document) -> None:
        if new_paragraph:
            document.add_paragraph(text)
        else:
            document.paragraphs[-1].add_run(text)

    return _word(edit)


def _sorted_rows(
    key: Callable[[tuple[Any, ...]], Any], *, names_only: bool = False, reverse: bool = False
) -> Edit:
    """Rows 2-11 of Staff rewritten sorted by ``key``; ``names_only`` sorts column A alone."""

    def edit(book: openpyxl.Workbook) -> None:
        sheet = book["Staff"]
        rows = [tuple(cell.value for cell in row) for row in sheet.iter_rows(min_row=2)]
        if names_only:
            names = sorted((row[0] for row in rows), key=str)
            rows = [(name, *row[1:]) for name, row in zip(names, rows, strict=True)]
        else:
            rows.sort(key=key, reverse=reverse)
        for number, row in enumerate(rows, start=2):
            for column, value in zip("ABC", row, strict=True):
                sheet[f"{column}{number}"] = value

    return _book(edit)


def _new_sheet(position: int, values: dict[str, Any]) -> Edit:
    def edit(book: openpyxl.Workbook) -> None:
        sheet = book.create_sheet("Review", position)
        for cell, value in values.items():
            sheet[cell] = value

    return _book(edit)


REVIEW = {"A1": "Checked by", "B1": "Lena", "A2": "Approved", "B2": "yes"}


def _slide_order(order: list[int]) -> Callable[[pptx.presentation.Presentation], None]:
    def edit(deck: pptx.presentation.Presentation) -> None:
        ids = deck.slides._sldIdLst
        entries = list(ids)
        for entry in entries:
            ids.remove(entry)
        for index in order:
            ids.append(entries[index])

    return edit


def _notes(
    slide: int, text: str = "Mention the grant deadline in May."
) -> Callable[[pptx.presentation.Presentation], None]:
    def edit(deck: pptx.presentation.Presentation) -> None:
        deck.slides[slide].notes_slide.notes_text_frame.text = text

    return edit


def _replace(old: str, new: str, count: int = -1) -> Edit:
    def edit(document: docx.document.Document) -> None:
        left = count
        for paragraph in document.paragraphs:
            if old in paragraph.text and left != 0:
                _set_text(paragraph, paragraph.text.replace(old, new, 1 if left > 0 else -1))
                left -= 1

    return _word(edit)


def _cell(row: int, column: int, text: str) -> Edit:
    def edit(document: docx.document.Document) -> None:
        document.tables[0].cell(row, column).text = text

    return _word(edit)


def _then(*edits: Edit) -> Edit:
    def apply(data: bytes) -> bytes:
        for edit in edits:
            data = edit(data)
        return data

    return apply


LINE_RESULTS = {f"B{r}*C{r}": float(q * p) for r, (_, q, p) in enumerate(ITEMS, 2)}
TOTALS = {"SUM(B2:B61)": float(sum(UNITS)), "SUM(B2:B40)": float(sum(UNITS[:39]))}

# Per task: the edit that does what is asked, and edits that do something else.
CASES: dict[str, tuple[Edit, list[Edit]]] = {
    "gui-writer-bold-title": (
        _paragraph_edit(0, _bold_runs),
        [_paragraph_edit(0, lambda p: _bold_runs(p, 1)), _paragraph_edit(1, _bold_runs)],
    ),
    "gui-writer-heading-results": (_style(3), [_style(2)]),
    "gui-writer-center-closing": (_align(4), [_align(3)]),
    "gui-writer-append-signature": (
        _append("Approved by: R. Okafor", True),
        [_append(" Approved by: R. Okafor", False), _append("Approved by:", True)],
    ),
    "gui-writer-edit-status": (
        _paragraph_edit(1, lambda p: _set_text(p, "Status: final, signed.")),
        [_paragraph_edit(2, lambda p: _set_text(p, "Status: final, signed."))],
    ),
    "gui-writer-underline-warning": (
        _paragraph_edit(2, _underline),
        [_paragraph_edit(1, _underline)],
    ),
    "gui-calc-fill-line-totals": (
        _with_results(
            _book(_values("Order", {f"D{r}": f"=B{r}*C{r}" for r in range(2, 10)})), LINE_RESULTS
        ),
        [
            _with_results(
                _book(_values("Order", {f"D{r}": f"=B{r}*C{r}" for r in range(2, 6)})),
                LINE_RESULTS,
            ),
            _book(
                _values("Order", {f"D{r}": float(q * p) for r, (_, q, p) in enumerate(ITEMS, 2)})
            ),
        ],
    ),
    "gui-calc-total-units": (
        _with_results(_book(_values("Sales", {"B62": "=SUM(B2:B61)"})), TOTALS),
        [
            _with_results(_book(_values("Sales", {"B62": "=SUM(B2:B40)"})), TOTALS),
            _book(_values("Sales", {"B62": float(sum(UNITS))})),
        ],
    ),
    "gui-calc-percent-shares": (
        _book(_percent([f"B{r}" for r in range(2, 8)])),
        [_book(_percent([f"C{r}" for r in range(2, 8)])), _book(_percent(["B2", "B3", "B4"]))],
    ),
    "gui-calc-bold-feb-header": (
        _book(_sheet_bold("Feb", ["A1", "B1", "C1"])),
        [_book(_sheet_bold("Jan", ["A1", "B1", "C1"])), _book(_sheet_bold("Feb", ["A1", "B1"]))],
    ),
    "gui-calc-q2-revenue": (
        _book(_values("Q2", {"B2": 410, "B3": 385, "B4": 452})),
        [
            _book(_values("Summary", {"B2": 410, "B3": 385, "B4": 452})),
            _book(_values("Q2", {"B2": 410, "B3": 358, "B4": 452})),
        ],
    ),
    "gui-calc-fix-price": (
        _book(_values("Stock", {"C4": 19.99})),
        [_book(_values("Stock", {"C3": 19.99}))],
    ),
    "gui-impress-retitle-first": (
        _deck(lambda d: _title(d, 0, "Harbor Renewal Plan")),
        [
            _deck(lambda d: _title(d, 0, "Harbor PlanHarbor Renewal Plan")),
            _deck(lambda d: _title(d, 1, "Harbor Renewal Plan")),
        ],
    ),
    "gui-impress-bold-callout": (
        _deck(_bold_shape(_callout)),
        [_deck(_bold_shape(_first_title)), _deck(_bold_shape(_callout, words=1))],
    ),
    "gui-impress-add-bullet": (_deck(_bullet(1)), [_deck(_bullet(0))]),
    "gui-impress-move-callout": (
        _deck(_move(720000, 0)),
        [_deck(_move(0, 720000)), _deck(_move(72000, 0)), _deck(_move(720000, 360000))],
    ),
    "gui-impress-closing-slide": (_deck(_new_slide(3)), [_deck(_new_slide(2))]),
    "gui-impress-retitle-risks": (
        _deck(lambda d: _title(d, 2, "Risks and Mitigations")),
        [_deck(lambda d: _title(d, 1, "Risks and Mitigations"))],
    ),
    "gui-writer-replace-vendor": (
        _replace("vendor", "supplier"),
        [
            _replace("vendor", "supplier", count=1),
            _replace("vendor", "Supplier"),
            _then(_replace("vendor", "supplier"), _replace("finance desk", "front desk")),
        ],
    ),
    "gui-writer-table-gaskets": (
        _cell(2, 1, "30"),
        [
            _cell(3, 1, "30"),
            _then(_cell(2, 1, "30"), _cell(3, 1, "30")),
            _then(_cell(2, 1, "30"), _paragraph_edit(2, lambda p: _set_text(p, "Send today."))),
        ],
    ),
    "gui-calc-sort-names": (
        _sorted_rows(lambda row: row[0]),
        [
            _sorted_rows(lambda row: row[0], names_only=True),
            _sorted_rows(lambda row: row[0], reverse=True),
            _sorted_rows(lambda row: row[1]),
            _then(_sorted_rows(lambda row: row[0]), _book(_values("Staff", {"A1": "Person"}))),
        ],
    ),
    "gui-calc-review-sheet": (
        _new_sheet(2, REVIEW),
        [
            _new_sheet(0, REVIEW),
            _new_sheet(2, {**REVIEW, "B2": None}),
            _then(_new_sheet(2, REVIEW), _book(_values("Stock", {"B1": "Lena"}))),
        ],
    ),
    "gui-impress-budget-last": (
        _deck(_slide_order([0, 2, 1])),
        [
            _deck(_slide_order([1, 2, 0])),
            _deck(_slide_order([0, 1, 2])),
            _then(_deck(_slide_order([0, 2, 1])), _deck(lambda d: _title(d, 0, "Harbor"))),
        ],
    ),
    "gui-impress-budget-notes": (
        _deck(_notes(1)),
        [
            _deck(_notes(0)),
            _deck(_notes(1, "Mention the grant deadline")),
            _then(_deck(_notes(1)), _deck(_notes(2, "Thanks"))),
            _then(_deck(_notes(1)), _deck(lambda d: _title(d, 1, "Budget 2026"))),
        ],
    ),
}


def _verdict(gui_task: GuiTask, data: bytes, tmp_path: Path, name: str) -> bool:
    document = gui_task.task.initial_state
    assert document.kind == "document"
    path = tmp_path / f"{name}-{document.path}"
    path.write_bytes(data)
    return gui_task.check(str(path))


def test_every_task_has_cases() -> None:
    assert set(CASES) == set(TASKS)


@pytest.mark.parametrize("task_id", sorted(CASES))
def test_a_verifier_passes_the_asked_for_document_and_fails_the_others(
    task_id: str, tmp_path: Path
) -> None:
    gui_task = TASKS[task_id]
    start = gui_task.document()
    good, bad = CASES[task_id]
    assert _verdict(gui_task, start, tmp_path, "start") is False
    assert _verdict(gui_task, good(start), tmp_path, "good") is True
    for number, edit in enumerate(bad):
        assert _verdict(gui_task, edit(start), tmp_path, f"bad{number}") is False, number

"""Desktop backend tests: the desktop image and generated Office documents."""

from __future__ import annotations

from pathlib import Path

import docx
import openpyxl
import pptx
import pytest

from tests.sandboxes.desktop.backend_helpers import CALC_ITEM, IMPRESS_TITLE, WRITER_TEXT


@pytest.fixture(scope="session")
def desktop_image() -> str:
    """The desktop image (built on first use: minutes)."""
    from sandboxes.desktop.image import build_desktop_image

    return build_desktop_image()


@pytest.fixture
def writer_document(tmp_path: Path) -> Path:
    path = tmp_path / "survey.docx"
    document = docx.Document()
    document.add_paragraph(WRITER_TEXT)
    document.save(str(path))
    return path


@pytest.fixture
def calc_document(tmp_path: Path) -> Path:
    path = tmp_path / "stock.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["Item", "Count"])
    sheet.append([CALC_ITEM, 12])
    workbook.save(str(path))
    return path


@pytest.fixture
def impress_document(tmp_path: Path) -> Path:
    path = tmp_path / "tides.pptx"
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[0])
    assert slide.shapes.title is not None
    slide.shapes.title.text = IMPRESS_TITLE
    presentation.save(str(path))
    return path

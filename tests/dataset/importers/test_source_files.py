"""The one rule every importer takes source files by: regular files inside the source folder, a
link followed only while it stays inside (its target copied as a plain file), anything else
refused with the file named; and each importer that used its own rule now follows this one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dataset.importers.mobile.sources import SourceError, regular_file
from dataset.importers.source_files import (
    SourceFileError,
    copy_source,
    copy_source_tree,
    read_source_file,
    source_file_inside,
)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A source folder: a file, a link to it (inside), a link out, a FIFO, a folder link."""
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours")
    folder = tmp_path / "source"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "page.html").write_text("<p>page</p>")
    (folder / "alias.html").symlink_to("sub/page.html")
    (folder / "leak.html").symlink_to(outside)
    os.mkfifo(folder / "pipe")
    (folder / "up").symlink_to(tmp_path, target_is_directory=True)
    return folder


def test_a_link_inside_is_read_as_its_target(source: Path) -> None:
    assert source_file_inside(source / "alias.html", source) == (source / "sub/page.html").resolve()
    assert read_source_file(source / "alias.html", source) == b"<p>page</p>"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("leak.html", "outside"),
        ("../secret.txt", "outside"),
        ("pipe", "not_regular"),
        ("gone.html", "missing"),
        ("up/secret.txt", "outside"),
    ],
)
def test_everything_else_is_refused_and_named(source: Path, name: str, reason: str) -> None:
    with pytest.raises(SourceFileError) as raised:
        read_source_file(source / name, source)
    assert raised.value.reason == reason
    assert str(raised.value).startswith(str(source / name))


def test_a_tree_copy_keeps_going_past_refusals_and_writes_no_link(
    source: Path, tmp_path: Path
) -> None:
    refused: list[SourceFileError] = []
    copy_source_tree(source, tmp_path / "copy", refused=refused)
    copied = sorted(
        p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*")
    )
    assert copied == ["alias.html", "sub", "sub/page.html"]
    assert not (tmp_path / "copy" / "alias.html").is_symlink()
    assert (tmp_path / "copy" / "alias.html").read_text() == "<p>page</p>"
    assert sorted((e.path.name, e.reason) for e in refused) == [
        ("leak.html", "outside"),
        ("pipe", "not_regular"),
        ("up", "folder_link"),
    ]
    with pytest.raises(SourceFileError):  # without a list, the first refusal is raised
        copy_source_tree(source, tmp_path / "again")


def test_a_single_file_source_stays_inside_its_own_folder(source: Path, tmp_path: Path) -> None:
    refused: list[SourceFileError] = []
    copy_source(source / "sub" / "page.html", tmp_path / "one.html", refused)
    copy_source(source / "leak.html", tmp_path / "two.html", refused)
    assert (tmp_path / "one.html").read_text() == "<p>page</p>"
    assert not (tmp_path / "two.html").exists()
    assert [e.reason for e in refused] == ["outside"]


def test_the_mobile_importers_follow_the_same_rule(source: Path) -> None:
    assert (
        regular_file(source / "alias.html", source, "steps[0]")
        == (source / "sub/page.html").resolve()
    )
    with pytest.raises(SourceError, match=r"steps\[0\]: screenshot 'leak.html' is a link leading"):
        regular_file(source / "leak.html", source, "steps[0]")
    with pytest.raises(SourceError, match="is outside the source folder"):
        regular_file(source / "../secret.txt", source, "steps[1]", shown="../secret.txt")
    with pytest.raises(SourceError, match=r"screenshot file 'gone\.png' is missing"):
        regular_file(source / "gone.png", source, "steps[2]")
    with pytest.raises(SourceError, match="is not a regular file"):
        regular_file(source / "pipe", source, "steps[3]")

"""``open_confined``: what it opens and what it refuses, on real files, links and FIFOs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from storage.confined import UnsafeFileError, open_confined

CREATE = os.O_WRONLY | os.O_CREAT | os.O_APPEND


def test_a_new_file_in_new_folders_is_made_and_written(tmp_path: Path) -> None:
    target = tmp_path / "logs" / "deep" / "run.jsonl"
    with os.fdopen(open_confined(target, CREATE, within=tmp_path), "w") as stream:
        stream.write("line\n")
    assert target.read_text() == "line\n"


def test_a_fifo_in_place_of_a_results_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "verdicts.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFileError, match="is not a regular file"):
        open_confined(fifo, os.O_RDWR)


def test_a_linked_folder_below_the_root_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "results"
    root.mkdir()
    (root / "logs").symlink_to(outside)
    with pytest.raises(UnsafeFileError, match="logs: is a symbolic link"):
        open_confined(root / "logs" / "run.jsonl", CREATE, within=root)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("relative", ["../escaped.txt", "a/../../escaped.txt"])
def test_dot_dot_parts_are_refused(tmp_path: Path, relative: str) -> None:
    root = tmp_path / "home"
    root.mkdir()
    with pytest.raises(UnsafeFileError):
        open_confined(root / relative, CREATE, within=root)
    assert not (tmp_path / "escaped.txt").exists()


def test_a_missing_file_opened_without_create_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_confined(tmp_path / "absent.jsonl", os.O_RDWR)

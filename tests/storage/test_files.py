"""Atomic writes: whole files replaced, no temporaries left behind, failures change nothing."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from storage.files import write_bytes_atomic, write_json_atomic, write_text_atomic


def test_atomic_write_replaces_whole_files_and_leaves_no_temporaries(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "file.json"
    write_json_atomic(target, {"a": 1})
    write_json_atomic(target, {"b": "é"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"b": "é"}
    assert "é" in target.read_text(encoding="utf-8")  # kept as is, not escaped
    assert [path.name for path in target.parent.iterdir()] == ["file.json"]
    with pytest.raises(TypeError):
        write_json_atomic(target, {"bad": object()})
    assert json.loads(target.read_text(encoding="utf-8")) == {"b": "é"}
    assert [path.name for path in target.parent.iterdir()] == ["file.json"]


def test_text_and_bytes_writes_are_readable_by_others(tmp_path: Path) -> None:
    text = tmp_path / "a.txt"
    write_text_atomic(text, "ünï\n")
    assert text.read_bytes() == "ünï\n".encode()
    data = tmp_path / "b.bin"
    write_bytes_atomic(data, b"\x00\x01")
    assert data.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(data.stat().st_mode) == 0o644

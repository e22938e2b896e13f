"""What the viewer opened: results folders, datasets, and where corrections go."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from viewer.source import SourceError, open_source

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def test_a_results_folder_finds_its_dataset_and_replay_reports(tmp_path: Path) -> None:
    results = tmp_path / "runs" / "judge" / "mini"
    results.mkdir(parents=True)
    (results / "verdicts.jsonl").write_text("", encoding="utf-8")
    shutil.copytree(MINI, tmp_path / "data" / "mini")
    # summary.json names the dataset as the judge was given it: relative to where it ran.
    (results / "summary.json").write_text(json.dumps({"dataset": "data/mini"}), encoding="utf-8")
    replay = tmp_path / "runs" / "replay" / "mini-local"
    replay.mkdir(parents=True)
    (replay / "fidelity.jsonl").write_text("", encoding="utf-8")
    source = open_source(results / "verdicts.jsonl")
    assert source.results == results
    assert source.dataset == (tmp_path / "data" / "mini").resolve()
    assert source.replay is not None
    assert source.replay.resolve() == replay.resolve()
    assert source.corrections == results / "label_corrections.jsonl"


def test_a_dataset_alone_keeps_corrections_beside_it_not_inside(tmp_path: Path) -> None:
    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    source = open_source(copy)
    assert source.results is None
    assert source.dataset == copy
    assert source.corrections == tmp_path.resolve() / "mini.label_corrections.jsonl"
    assert open_source(copy, corrections=tmp_path / "c.jsonl").corrections == tmp_path / "c.jsonl"


def test_anything_else_is_refused_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such folder"):
        open_source(tmp_path / "missing")
    with pytest.raises(SourceError, match="neither a results folder"):
        open_source(tmp_path)
    with pytest.raises(SourceError, match="not a dataset folder"):
        open_source(MINI, dataset=tmp_path)

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


def test_a_dataset_alone_keeps_corrections_in_the_users_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    copy = tmp_path / "checkout" / "datasets" / "mini"
    shutil.copytree(MINI, copy)
    source = open_source(copy)
    assert source.results is None
    assert source.dataset == copy
    # Under the user's data folder, nowhere in the tree that holds the dataset.
    assert source.corrections.is_relative_to(data / "agentjudge" / "label-corrections")
    assert not source.corrections.is_relative_to(tmp_path / "checkout")
    assert source.corrections.name.startswith("mini-")
    # Keyed by the folder: the same folder through a symlink shares the file, another does not.
    link = tmp_path / "link"
    link.symlink_to(copy)
    assert open_source(link).corrections == source.corrections
    other = tmp_path / "elsewhere" / "mini"
    shutil.copytree(MINI, other)
    assert open_source(other).corrections != source.corrections
    assert open_source(copy, corrections=tmp_path / "c.jsonl").corrections == tmp_path / "c.jsonl"


def test_without_xdg_data_home_corrections_go_under_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    expected = tmp_path / "home" / ".local" / "share" / "agentjudge" / "label-corrections"
    assert open_source(copy).corrections.parent == expected


def test_anything_else_is_refused_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such folder"):
        open_source(tmp_path / "missing")
    with pytest.raises(SourceError, match="neither a results folder"):
        open_source(tmp_path)
    with pytest.raises(SourceError, match="not a dataset folder"):
        open_source(MINI, dataset=tmp_path)

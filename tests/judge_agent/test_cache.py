"""Where the response cache lives: ``$AGENTJUDGE_CACHE``, else under the home directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_agent.cache import default_cache_dir


def test_the_cache_variable_moves_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTJUDGE_CACHE", str(tmp_path / "answers"))
    assert default_cache_dir() == tmp_path / "answers"


def test_without_the_variable_the_cache_is_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTJUDGE_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "agentjudge" / "responses"

"""A desktop document path with ``..`` parts: refused by ``datasets validate`` and replay alike,
and never written outside the desktop's home by the local backend (which writes it as root on the
host before the desktop starts)."""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

import pytest

from dataset.store import load_dataset
from sandboxes.base import SandboxError
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.sandbox import DocumentFile
from tests.replay.builders import MINI
from tests.security.test_results_folders import agentjudge

GUI_TASK = "word-memo-q4-update"


def escaping_path(target: Path) -> str:
    """An ``open_at`` below ``/home/user`` whose ``..`` parts climb to ``target`` on the host."""
    return "/home/user/" + "../" * 24 + str(target).lstrip("/")


def test_validate_and_replay_refuse_an_open_at_that_climbs_out(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    shutil.copytree(
        MINI, root, ignore=shutil.ignore_patterns("android-*", "fs-*", "pg-*", "search-*")
    )
    load_dataset(root)  # the GUI task and its runs alone make a valid dataset
    escaped = tmp_path / "escaped" / "planted.docx"
    task_file = root / "tasks" / GUI_TASK / "task.json"
    text = task_file.read_text()
    task_file.write_text(text.replace("/home/user/Documents/memo.docx", escaping_path(escaped)))
    assert escaping_path(escaped) in task_file.read_text()

    validated = agentjudge("datasets", "validate", str(root))
    assert validated.returncode == 1, validated.stdout + validated.stderr
    assert "open_at" in validated.stdout
    assert "must not have '.' or '..' parts" in validated.stdout
    replayed = agentjudge(
        "replay", str(root), "--output", str(tmp_path / "out"), "--backend", "local"
    )
    assert replayed.returncode != 0, replayed.stdout + replayed.stderr
    assert "must not have '.' or '..' parts" in replayed.stdout
    assert not escaped.parent.exists()


async def _start_and_stop(provider: LocalDesktopProvider, document: DocumentFile) -> None:
    sandbox = await provider.start_desktop(document)
    await sandbox.destroy()


@pytest.mark.slow
async def test_the_local_backend_never_writes_a_document_outside_the_home(tmp_path: Path) -> None:
    escaped = tmp_path / "escaped.docx"
    location = PurePosixPath(escaping_path(escaped)).relative_to("/home/user")
    async with LocalDesktopProvider() as provider:
        with pytest.raises(SandboxError, match=r"does not name a file inside"):
            await _start_and_stop(provider, DocumentFile(location, b"planted"))
    assert not escaped.exists()

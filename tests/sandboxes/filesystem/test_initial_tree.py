"""What a task's initial tree may hold, on every backend: bad names and special files fail the
sandbox's creation by name; links leaving the tree are copied as links and never followed."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dataset.models import DirectoryTreeState, Task
from sandboxes.base import SandboxError
from sandboxes.filesystem.sandbox import FilesystemProvider, FilesystemSandbox
from sandboxes.filesystem.tree import TreePathError
from sandboxes.runs import current_run
from tests.sandboxes.filesystem.helpers import BACKENDS, filesystem_provider

SECRET = b"the caller's private key, not the dataset's"


@pytest.fixture(params=BACKENDS)
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[FilesystemProvider]:
    async with filesystem_provider(request.param) as made:
        yield made


def _task(path: str = "initial") -> Task:
    return Task(
        id="fs-hostile",
        domain="ds",
        subdomain="filesystem",
        instruction="Look around.",
        initial_state=DirectoryTreeState(path=path),
    )


def _task_dir(tmp_path: Path) -> Path:
    tree = tmp_path / "task" / "initial"
    (tree / "sub").mkdir(parents=True)
    (tree / "fine.txt").write_text("fine\n")
    return tmp_path / "task"


def _run_entries() -> set[str]:
    folder = current_run().directory()
    return {path.name for path in folder.iterdir()}


async def test_a_name_that_is_not_utf8_fails_creation_naming_task_and_bytes(
    provider: FilesystemProvider, tmp_path: Path
) -> None:
    task_dir = _task_dir(tmp_path)
    bad = os.path.join(os.fsencode(task_dir / "initial" / "sub"), b"caf\xe9-\xff.txt")
    with open(bad, "wb") as handle:
        handle.write(b"latin-1 name")
    before = _run_entries()
    with pytest.raises(SandboxError) as raised:
        await provider.create(_task(), task_dir)
    message = str(raised.value)
    assert "task fs-hostile" in message
    assert repr(b"sub/caf\xe9-\xff.txt") in message
    assert "not UTF-8" in message
    assert provider.live() == []
    assert _run_entries() == before  # no half-copied tree left behind


async def test_a_fifo_fails_creation_instead_of_hanging_it(
    provider: FilesystemProvider, tmp_path: Path
) -> None:
    task_dir = _task_dir(tmp_path)
    os.mkfifo(task_dir / "initial" / "sub" / "pipe")
    with pytest.raises(SandboxError, match=r"fs-hostile.*'sub/pipe'.*not a file, folder"):
        await provider.create(_task(), task_dir)
    assert provider.live() == []


async def test_an_initial_tree_linked_outside_the_task_folder_is_refused(
    provider: FilesystemProvider, tmp_path: Path
) -> None:
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "id_rsa").write_bytes(SECRET)
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "initial").symlink_to(outside)
    with pytest.raises(SandboxError, match=f"leads outside the task folder \\(to {outside}\\)"):
        await provider.create(_task(), tmp_path / "task")
    assert provider.live() == []


async def test_links_leaving_the_tree_are_copied_as_links_and_never_followed(
    provider: FilesystemProvider, tmp_path: Path
) -> None:
    task_dir = _task_dir(tmp_path)
    outside = tmp_path / "home"
    (outside / "ssh").mkdir(parents=True)
    (outside / "ssh" / "id_rsa").write_bytes(SECRET)
    tree = task_dir / "initial"
    (tree / "key").symlink_to(outside / "ssh" / "id_rsa")
    (tree / "sub" / "dotssh").symlink_to(outside / "ssh")
    (tree / "sub" / "relative").symlink_to("../../../home/ssh/id_rsa")
    sandbox = await provider.create(_task(), task_dir)
    assert isinstance(sandbox, FilesystemSandbox)
    async with sandbox:
        entries = {entry.path: entry.kind for entry in await sandbox.tree.walk()}
        assert entries == {
            "fine.txt": "file",
            "key": "symlink",
            "sub": "directory",
            "sub/dotssh": "symlink",
            "sub/relative": "symlink",
        }
        for link in ("key", "sub/relative", "sub/dotssh/id_rsa"):
            with pytest.raises(TreePathError):
                await sandbox.tree.read_bytes(link)
        with pytest.raises(TreePathError):
            await sandbox.tree.list_directory("sub/dotssh")
        # What a verifier gets (the exported copy) holds links too, not the file's bytes.
        exported = tmp_path / "exported"
        await sandbox.tree.export(exported)
        copied = [path for path in exported.rglob("*") if path.is_file() and not path.is_symlink()]
        assert [path.relative_to(exported).as_posix() for path in copied] == ["fine.txt"]
        assert all(SECRET not in path.read_bytes() for path in copied)
        assert os.readlink(exported / "key") == str(outside / "ssh" / "id_rsa")

"""The filesystem sandbox contract, run against every backend (local and Docker)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import pytest

from dataset.models import DirectoryTreeState, EmptyState, SqlSeedState, Task
from sandboxes.base import SandboxError
from sandboxes.filesystem.sandbox import FilesystemProvider, FilesystemSandbox
from sandboxes.filesystem.tree import ReadOnlyTreeError, TreePathError
from tests.sandboxes.filesystem.helpers import BACKENDS, filesystem_provider

OLD = 1_600_000_000.0  # 2020-09-13: an mtime no fresh copy would have by accident


@pytest.fixture(params=BACKENDS)
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[FilesystemProvider]:
    async with filesystem_provider(request.param) as made:
        yield made


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    tree = tmp_path / "task" / "initial"
    (tree / "docs" / "deep").mkdir(parents=True)
    (tree / "docs" / "a.txt").write_text("alpha\n")
    (tree / "docs" / "deep" / "b.md").write_text("# bee\n")
    (tree / "top.csv").write_bytes(b"x,y\n1,2\n")
    (tree / "link-to-a").symlink_to("docs/a.txt")
    for path in [*tree.rglob("*"), tree]:
        if not path.is_symlink():
            os.utime(path, (OLD, OLD))
    return tmp_path / "task"


def make_task(state: DirectoryTreeState | EmptyState | SqlSeedState) -> Task:
    return Task(
        id="fs-contract",
        domain="ds",
        subdomain="filesystem",
        instruction="Exercise the sandbox.",
        initial_state=state,
    )


async def fresh(provider: FilesystemProvider, task_dir: Path) -> FilesystemSandbox:
    sandbox = await provider.create(make_task(DirectoryTreeState()), task_dir)
    assert isinstance(sandbox, FilesystemSandbox)
    return sandbox


async def test_creation_copies_the_tree_with_contents_and_mtimes(
    provider: FilesystemProvider, task_dir: Path
) -> None:
    async with await fresh(provider, task_dir) as sandbox:
        tree = sandbox.tree
        assert await tree.read_bytes("docs/a.txt") == b"alpha\n"
        assert await tree.read_bytes("docs/deep/b.md") == b"# bee\n"
        entries = {entry.path: entry for entry in await tree.walk()}
        assert sorted(entries) == [
            "docs",
            "docs/a.txt",
            "docs/deep",
            "docs/deep/b.md",
            "link-to-a",
            "top.csv",
        ]
        assert entries["link-to-a"].kind == "symlink"
        assert entries["docs"].kind == "directory"
        assert entries["top.csv"].size == 8
        for path in ("docs/a.txt", "docs/deep/b.md", "top.csv", "docs"):
            assert entries[path].modified == pytest.approx(OLD, abs=1)
        assert await tree.read_bytes("link-to-a") == b"alpha\n"


async def test_empty_state_gives_an_empty_tree(
    provider: FilesystemProvider, tmp_path: Path
) -> None:
    async with await provider.create(make_task(EmptyState()), tmp_path) as sandbox:
        assert isinstance(sandbox, FilesystemSandbox)
        assert await sandbox.tree.walk() == []


async def test_a_database_state_is_refused(provider: FilesystemProvider, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="sql_seed"):
        await provider.create(make_task(SqlSeedState()), tmp_path)


async def test_writes_directories_and_moves(provider: FilesystemProvider, task_dir: Path) -> None:
    async with await fresh(provider, task_dir) as sandbox:
        tree = sandbox.tree
        await tree.write_bytes("docs/a.txt", b"replaced")
        assert await tree.read_bytes("docs/a.txt") == b"replaced"
        await tree.make_directory("new/nested/dir")
        await tree.make_directory("new/nested/dir")  # no error when it exists
        await tree.write_bytes("new/nested/dir/c.txt", b"sea")
        assert [entry.path for entry in await tree.list_directory("new/nested/dir")] == [
            "new/nested/dir/c.txt"
        ]
        await tree.move("top.csv", "new/top.csv")
        assert not [entry for entry in await tree.list_directory("") if entry.name == "top.csv"]
        assert await tree.read_bytes("new/top.csv") == b"x,y\n1,2\n"
        with pytest.raises(FileExistsError):
            await tree.move("docs/a.txt", "new/top.csv")
        with pytest.raises(FileNotFoundError):
            await tree.move("nowhere.txt", "elsewhere.txt")
        with pytest.raises(FileNotFoundError):
            await tree.write_bytes("missing/parent.txt", b"x")
        with pytest.raises(IsADirectoryError):
            await tree.write_bytes("docs", b"x")
        with pytest.raises(FileNotFoundError):
            await tree.read_bytes("docs/zzz.txt")
        with pytest.raises(FileNotFoundError):
            await tree.stat("docs/zzz.txt")


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "docs/../../x", "a//b", "./a", "a\x00b"])
async def test_paths_that_are_not_normal_relative_paths_are_refused(
    provider: FilesystemProvider, task_dir: Path, bad: str
) -> None:
    async with await fresh(provider, task_dir) as sandbox:
        with pytest.raises(TreePathError):
            await sandbox.tree.read_bytes(bad)
        with pytest.raises(TreePathError):
            await sandbox.tree.write_bytes(bad, b"x")


async def test_symlinks_leaving_the_tree_are_refused(tmp_path: Path) -> None:
    # Built locally: the task tree itself carries the escaping link.
    from sandboxes.filesystem.local import LocalFilesystemProvider

    tree_root = tmp_path / "task" / "initial"
    tree_root.mkdir(parents=True)
    (tree_root / "escape").symlink_to("/etc")
    (tree_root / "escape-file").symlink_to("/etc/hostname")
    async with LocalFilesystemProvider() as provider:
        sandbox = await fresh(provider, tmp_path / "task")
        with pytest.raises(TreePathError):
            await sandbox.tree.read_bytes("escape-file")
        with pytest.raises(TreePathError):
            await sandbox.tree.list_directory("escape")
        with pytest.raises(TreePathError):
            await sandbox.tree.write_bytes("escape/owned", b"x")
        with pytest.raises(TreePathError):
            await sandbox.tree.resolve("escape/passwd")
        assert (await sandbox.tree.stat("escape")).kind == "symlink"  # lstat is allowed


async def test_clones_are_isolated_from_the_snapshot_and_each_other(
    provider: FilesystemProvider, task_dir: Path
) -> None:
    sandbox = await fresh(provider, task_dir)
    await sandbox.tree.write_bytes("docs/a.txt", b"replayed state")
    async with await sandbox.freeze() as snapshot:
        first = await snapshot.clone()
        second = await snapshot.clone()
        view = await snapshot.clone(writable=False)
        await first.tree.write_bytes("docs/a.txt", b"judge one wrote this")
        await first.tree.write_bytes("docs/new.txt", b"only in one")
        await first.tree.move("top.csv", "moved.csv")
        assert await second.tree.read_bytes("docs/a.txt") == b"replayed state"
        assert await view.tree.read_bytes("docs/a.txt") == b"replayed state"
        assert "docs/new.txt" not in [entry.path for entry in await second.tree.walk()]
        assert await view.tree.read_bytes("top.csv") == b"x,y\n1,2\n"
        # A clone made after the writes still sees the frozen state.
        third = await snapshot.clone()
        assert await third.tree.read_bytes("docs/a.txt") == b"replayed state"
        for clone in (first, second, third):
            await clone.destroy()


async def test_the_read_only_view_refuses_writes_and_is_shared(
    provider: FilesystemProvider, task_dir: Path
) -> None:
    sandbox = await fresh(provider, task_dir)
    async with await sandbox.freeze() as snapshot:
        view = await snapshot.clone(writable=False)
        assert view.read_only
        assert await snapshot.clone(writable=False) is view
        with pytest.raises(ReadOnlyTreeError):
            await view.tree.write_bytes("docs/a.txt", b"x")
        with pytest.raises(ReadOnlyTreeError):
            await view.tree.make_directory("x")
        with pytest.raises(ReadOnlyTreeError):
            await view.tree.move("docs/a.txt", "b.txt")
        with pytest.raises(SandboxError):
            await view.freeze()
        assert await view.tree.read_bytes("docs/a.txt") == b"alpha\n"


async def test_export_copies_contents_and_mtimes(
    provider: FilesystemProvider, task_dir: Path, tmp_path: Path
) -> None:
    async with await fresh(provider, task_dir) as sandbox:
        await sandbox.tree.write_bytes("fresh.txt", b"new")
        target = tmp_path / "export"
        await sandbox.tree.export(target)
        assert (target / "docs" / "deep" / "b.md").read_text() == "# bee\n"
        assert (target / "fresh.txt").read_bytes() == b"new"
        assert (target / "top.csv").stat().st_mtime == pytest.approx(OLD, abs=1)
        assert (target / "link-to-a").is_symlink()


async def test_closing_the_provider_after_an_error_removes_everything(
    task_dir: Path,
) -> None:
    from sandboxes.filesystem.local import LocalFilesystemProvider, LocalFilesystemSandbox

    directories: list[Path] = []

    async def crash_while_holding_sandboxes() -> None:
        async with LocalFilesystemProvider() as provider:
            sandbox = await fresh(provider, task_dir)
            kept = await fresh(provider, task_dir)
            snapshot = await kept.freeze()
            clone = await snapshot.clone()
            await clone.tree.write_bytes("judge.txt", b"written")  # builds the clone
            for item in (sandbox, clone):
                assert isinstance(item, LocalFilesystemSandbox)
                directories.append(item.directory)
            directories.append(snapshot.directory)  # type: ignore[attr-defined]
            assert all(path.exists() for path in directories)
            raise RuntimeError("judge crashed")

    with pytest.raises(RuntimeError, match="judge crashed"):
        await crash_while_holding_sandboxes()
    assert len(directories) == 3
    assert not any(path.exists() for path in directories)


async def test_link_clones_cost_nothing_until_the_first_write(task_dir: Path) -> None:
    from sandboxes.filesystem.local import LocalFilesystemProvider, LocalFilesystemSandbox

    async with LocalFilesystemProvider(clone_method="link") as provider:
        snapshot = await (await fresh(provider, task_dir)).freeze()
        clone = await snapshot.clone()
        assert isinstance(clone, LocalFilesystemSandbox)
        frozen = snapshot.directory  # type: ignore[attr-defined]
        assert not clone.directory.exists()  # nothing built yet...
        assert await clone.tree.read_bytes("docs/deep/b.md") == b"# bee\n"  # ...yet it reads
        assert clone.root == str(clone.directory.resolve())  # and its root never changes
        await clone.tree.write_bytes("docs/a.txt", b"changed")
        assert clone.directory.is_dir()
        written = clone.directory / "docs" / "a.txt"
        untouched = clone.directory / "docs" / "deep" / "b.md"
        assert written.stat().st_ino != (frozen / "docs" / "a.txt").stat().st_ino
        assert untouched.stat().st_ino == (frozen / "docs" / "deep" / "b.md").stat().st_ino
        assert (frozen / "docs" / "a.txt").read_bytes() == b"alpha\n"
        assert await clone.tree.read_bytes("docs/a.txt") == b"changed"
        await clone.destroy()
        assert not clone.directory.exists()


async def test_a_verifier_on_an_unwritten_clone_gets_a_private_copy(task_dir: Path) -> None:
    from sandboxes.filesystem.local import LocalFilesystemProvider, LocalFilesystemSandbox

    async with LocalFilesystemProvider(clone_method="link") as provider:
        snapshot = await (await fresh(provider, task_dir)).freeze()
        clone = await snapshot.clone()
        assert isinstance(clone, LocalFilesystemSandbox)
        directory = await clone.tree.host_directory()
        assert directory == clone.directory.resolve()
        assert directory != snapshot.directory.resolve()  # type: ignore[attr-defined]
        assert (directory / "top.csv").read_bytes() == b"x,y\n1,2\n"


@pytest.mark.parametrize("method", ["overlay", "link", "copy"])
async def test_every_local_clone_method_isolates_and_keeps_times(
    task_dir: Path, method: Literal["overlay", "link", "copy"]
) -> None:
    from sandboxes.filesystem.local import LocalFilesystemProvider, LocalFilesystemSandbox

    async with LocalFilesystemProvider(clone_method=method) as provider:
        snapshot = await (await fresh(provider, task_dir)).freeze()
        first, second = await snapshot.clone(), await snapshot.clone()
        assert isinstance(first, LocalFilesystemSandbox)
        await first.tree.write_bytes("docs/a.txt", b"one")
        await first.tree.make_directory("docs/deep/new")
        assert await second.tree.read_bytes("docs/a.txt") == b"alpha\n"
        assert (await second.tree.stat("docs/deep")).modified == pytest.approx(OLD, abs=1)
        assert (await first.tree.stat("top.csv")).modified == pytest.approx(OLD, abs=1)
        if method != "link":
            # Overlays and copies are safe even for a writer that rewrites a file in place.
            host = await first.tree.host_directory()
            with (host / "top.csv").open("r+b") as handle:
                handle.write(b"IN PLACE")
            assert await second.tree.read_bytes("top.csv") == b"x,y\n1,2\n"
            frozen = snapshot.directory  # type: ignore[attr-defined]
            assert (frozen / "top.csv").read_bytes() == b"x,y\n1,2\n"
        await first.destroy()
        await second.destroy()
        assert not first.directory.exists()
        if method == "overlay":
            from sandboxes.filesystem.overlay import mounts_below

            assert first.layers is not None
            assert not first.layers.exists()
            assert mounts_below(provider.run_directory) == []


async def test_the_default_local_clone_is_an_overlay_where_mounting_works(task_dir: Path) -> None:
    from sandboxes.filesystem.local import LocalFilesystemProvider
    from sandboxes.filesystem.overlay import mounts_below, overlay_supported

    async with LocalFilesystemProvider() as provider:
        expected = "overlay" if overlay_supported(provider.run_directory) else "link"
        assert provider.clone_method == expected
        snapshot = await (await fresh(provider, task_dir)).freeze()
        clone = await snapshot.clone()
        if expected == "overlay":
            assert clone.directory.resolve() in mounts_below(provider.run_directory)  # type: ignore[attr-defined]


CHILD = """
import asyncio, sys, time
from pathlib import Path
from dataset.models import DirectoryTreeState, Task
from sandboxes.filesystem.local import LocalFilesystemProvider

async def main():
    provider = LocalFilesystemProvider()
    task = Task(id="t", domain="ds", subdomain="filesystem", instruction="x",
                initial_state=DirectoryTreeState())
    snapshot = await (await provider.create(task, Path(sys.argv[1]))).freeze()
    clone = await snapshot.clone()
    await clone.tree.write_bytes("judge.txt", b"x")
    print(provider.run_directory, flush=True)
    time.sleep(600)

asyncio.run(main())
"""


async def test_a_killed_runs_trees_and_overlay_mounts_are_collected(task_dir: Path) -> None:
    import signal
    import subprocess
    import sys

    from environments.leftovers import collect_all_leftovers
    from sandboxes.filesystem.overlay import mounts_below

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(task_dir)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        run_directory = Path(child.stdout.readline().strip())
        assert run_directory.is_dir()
        had_mounts = bool(mounts_below(run_directory))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    removed = await collect_all_leftovers()
    assert not run_directory.exists(), removed
    assert mounts_below(run_directory) == []
    if had_mounts:
        assert any(line.startswith("overlay mount") for line in removed)

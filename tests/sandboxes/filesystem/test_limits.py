"""Bounded reads and clone quotas, on every backend: the tree reads at most what it is asked
from one end of a file, refuses files that are not regular, and keeps a writable clone's usage
under its quota with an exact account of what it holds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dataset.models import DirectoryTreeState, Task
from sandboxes.filesystem.sandbox import (
    CLONE_QUOTA_BYTES,
    FilesystemProvider,
    FilesystemSandbox,
    FilesystemSnapshot,
)
from sandboxes.filesystem.tree import (
    BLOCK_BYTES,
    QuotaExceededError,
    SpecialFileError,
    charge,
)
from tests.sandboxes.filesystem.helpers import (
    BACKENDS,
    cloned,
    filesystem_provider,
    run_in_tree,
)

LINE = b"0123456789abcdef\n"  # 17 bytes
LINES = 40_000  # 680 KB: more than one read step


def task() -> Task:
    return Task(
        id="fs-limits",
        domain="ds",
        subdomain="filesystem",
        instruction="Hold some files.",
        initial_state=DirectoryTreeState(kind="directory_tree", path="initial"),
    )


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    tree = tmp_path / "task" / "initial"
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "a.txt").write_text("alpha\n")
    (tree / "lines.txt").write_bytes(LINE * LINES)
    (tree / "link").symlink_to("docs")
    return tmp_path / "task"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def sandbox(backend: str, task_dir: Path) -> AsyncIterator[FilesystemSandbox]:
    async with filesystem_provider(backend) as provider:
        made = await provider.create(task(), task_dir)
        assert isinstance(made, FilesystemSandbox)
        async with made:
            yield made


async def test_bounded_reads_take_at_most_the_limit_from_the_right_end(
    sandbox: FilesystemSandbox,
) -> None:
    data = LINE * LINES
    head = await sandbox.tree.read_head("lines.txt", 1000)
    assert (head.data, head.start, head.size, head.whole) == (data[:1000], 0, len(data), False)
    tail = await sandbox.tree.read_tail("lines.txt", 1000)
    assert (tail.data, tail.start, tail.whole) == (data[-1000:], len(data) - 1000, False)
    whole = await sandbox.tree.read_head("docs/a.txt", 1000)
    assert (whole.data, whole.whole) == (b"alpha\n", True)
    through_link = await sandbox.tree.read_tail("link/a.txt", 3)
    assert (through_link.data, through_link.start) == (b"ha\n", 3)


async def test_reads_asking_for_lines_stop_once_they_hold_them(
    sandbox: FilesystemSandbox,
) -> None:
    head = await sandbox.tree.read_head("lines.txt", 4 * 1024 * 1024, lines=3)
    assert head.data.count(b"\n") >= 3
    assert head.data == (LINE * LINES)[: len(head.data)]
    assert len(head.data) <= 64 * 1024
    tail = await sandbox.tree.read_tail("lines.txt", 4 * 1024 * 1024, lines=3)
    assert tail.data.count(b"\n") >= 3
    assert tail.data == (LINE * LINES)[tail.start :]
    assert len(tail.data) <= 64 * 1024


async def test_files_that_are_not_regular_are_refused_not_waited_on(
    sandbox: FilesystemSandbox,
) -> None:
    run_in_tree(sandbox, "mkfifo pipe")
    for read in (
        sandbox.tree.read_head("pipe", 10),
        sandbox.tree.read_tail("pipe", 10, lines=1),
        sandbox.tree.read_bytes("pipe"),
    ):
        with pytest.raises(SpecialFileError, match="fifo"):
            await asyncio.wait_for(read, timeout=30)
    with pytest.raises(IsADirectoryError):
        await sandbox.tree.read_head("docs", 10)


async def frozen(provider: FilesystemProvider, task_dir: Path) -> FilesystemSnapshot:
    sandbox = await provider.create(task(), task_dir)
    snapshot = await sandbox.freeze()
    assert isinstance(snapshot, FilesystemSnapshot)
    return snapshot


async def test_clones_get_the_default_quota_and_replay_sandboxes_none(
    backend: str, task_dir: Path
) -> None:
    async with filesystem_provider(backend) as provider:
        assert provider.quota_bytes == CLONE_QUOTA_BYTES
        sandbox = await provider.create(task(), task_dir)
        assert isinstance(sandbox, FilesystemSandbox)
        assert sandbox.tree.quota is None
        snapshot = await sandbox.freeze()
        async with snapshot:
            async with cloned(snapshot) as clone:
                assert clone.tree.quota == CLONE_QUOTA_BYTES
                assert clone.tree.usage == await clone.tree.measure()
                # docs, link, docs/a.txt, lines.txt
                assert clone.tree.usage == 3 * BLOCK_BYTES + charge("file", len(LINE) * LINES)
            async with cloned(snapshot, writable=False) as view:
                assert view.tree.quota is None
    async with filesystem_provider(backend, quota_bytes=None) as provider:
        snapshot = await frozen(provider, task_dir)
        async with snapshot, cloned(snapshot) as clone:
            assert clone.tree.quota is None


async def test_the_quota_counts_every_write_and_refuses_the_one_past_it(
    backend: str, task_dir: Path
) -> None:
    async with filesystem_provider(backend, quota_bytes=1) as probe:
        snapshot = await frozen(probe, task_dir)
        async with snapshot, cloned(snapshot) as clone:
            start = clone.tree.usage
    async with filesystem_provider(backend, quota_bytes=start + 10 * BLOCK_BYTES) as provider:
        snapshot = await frozen(provider, task_dir)
        async with snapshot, cloned(snapshot) as clone:
            tree = clone.tree
            assert tree.usage == start
            await tree.write_bytes("new.bin", b"n" * (4 * BLOCK_BYTES + 1))  # 5 blocks
            assert tree.usage == start + 5 * BLOCK_BYTES == await tree.measure()
            await tree.write_bytes("new.bin", b"n")  # replaced: 1 block
            assert tree.usage == start + BLOCK_BYTES == await tree.measure()
            await tree.make_directory("a/b/c")  # three directories
            await tree.make_directory("a/b")  # none
            assert tree.usage == start + 4 * BLOCK_BYTES == await tree.measure()
            await tree.write_bytes("link/through.txt", b"t" * BLOCK_BYTES)  # into docs/
            assert tree.usage == start + 5 * BLOCK_BYTES == await tree.measure()
            with pytest.raises(QuotaExceededError) as refused:
                await tree.write_bytes("docs/too-big.bin", b"x" * (5 * BLOCK_BYTES + 1))
            assert str(refused.value) == (
                f"quota reached: the sandbox holds {start + 5 * BLOCK_BYTES} of"
                f" {start + 10 * BLOCK_BYTES} bytes, and writing 'docs/too-big.bin' would add"
                f" {6 * BLOCK_BYTES} more"
            )
            with pytest.raises(QuotaExceededError):
                await tree.make_directory("d1/d2/d3/d4/d5/d6")
            assert [entry.path for entry in await tree.walk("docs")] == [
                "docs/a.txt",
                "docs/through.txt",
            ]
            assert not [entry for entry in await tree.walk() if entry.path.startswith("d1")]
            assert tree.usage == start + 5 * BLOCK_BYTES == await tree.measure()
            # Shrinking a file is allowed even with the quota nearly full, and frees space.
            await tree.write_bytes("lines.txt", b"")
            assert tree.usage == await tree.measure() < start


async def test_concurrent_writes_cannot_pass_the_quota_together(
    backend: str, task_dir: Path
) -> None:
    async with filesystem_provider(backend, quota_bytes=1) as probe:
        snapshot = await frozen(probe, task_dir)
        async with snapshot, cloned(snapshot) as clone:
            start = clone.tree.usage
    async with filesystem_provider(backend, quota_bytes=start + 10 * BLOCK_BYTES) as provider:
        snapshot = await frozen(provider, task_dir)
        async with snapshot, cloned(snapshot) as clone:
            outcomes = await asyncio.gather(
                *(
                    clone.tree.write_bytes(f"w{number}.bin", b"w" * 3 * BLOCK_BYTES)
                    for number in range(6)
                ),
                return_exceptions=True,
            )
            assert sum(outcome is None for outcome in outcomes) == 3
            assert all(isinstance(outcome, QuotaExceededError) for outcome in outcomes if outcome)
            assert clone.tree.usage == await clone.tree.measure() == start + 9 * BLOCK_BYTES

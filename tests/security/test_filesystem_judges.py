"""Hostile judge calls against the filesystem server, on the local and the Docker backend.

A judge controls its tool calls, and a dataset (or a verifier run on the replayed state)
controls what the tree holds. Each test builds the hostile input, makes the calls through a real
MCP client session on the server a judge gets, and checks that the answer is bounded and says
why, that the event loop kept running (so other judges' calls and time limits go on), that no
secret left the tree and that nothing outside it changed:

- a 50 MB file of one line read with ``head``/``tail``/whole: cut at the read limit, memory
  bounded, the loop never stalls (the reference's reader spun for minutes);
- a 1 GB sparse file: capped the same way; a media read or an edit of it is refused unread;
- ``read_multiple_files`` over many large files: one read limit for the whole answer;
- glob patterns built to make a backtracking matcher run for hours, and brace ranges of a
  billion values: answered at once, or refused;
- a call that is slow for good reasons (a tree of 30,000 directories) is interrupted by a time
  limit on the caller;
- a writable judge writing 100 files of 10 MB into a clone with a 256 MiB quota stops with a
  clear error before the clone passes it;
- path escapes on a writable clone: ``..``, absolute paths, a symlink to ``/etc``, a symlink loop,
  and a symlinked directory planted inside the tree while the server runs. The wider escape suite
  (45 attempts: every tool, hard links, null bytes, unicode dots, ...) is
  ``tests/mcp_servers/filesystem/test_security.py``.

The big files are planted in a live sandbox rather than frozen into a snapshot: freezing a 1 GB
file into a Docker image would cost more than the test. The server over it is the judges' own
(``filesystem_server`` on the sandbox's tree), read-only for the read tests.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from mcp import Client, types

from dataset.models import DirectoryTreeState, Task
from mcp_servers.filesystem.content import READ_LIMIT_BYTES
from mcp_servers.filesystem.server import filesystem_server
from sandboxes.filesystem.sandbox import FilesystemSandbox, FilesystemSnapshot
from sandboxes.filesystem.tree import charge
from tests.sandboxes.filesystem.helpers import (
    BACKENDS,
    cloned,
    filesystem_provider,
    run_in_tree,
)

LIMIT = READ_LIMIT_BYTES
SECRET = "TOP-SECRET-91ab"
STALL_BOUND = 0.5
"""The longest the event loop may go without running a 10 ms ticker during a hostile call. The
blocking readers held it for the whole call (minutes for 50 MB, hours for a backtracking glob);
the bound leaves room for a worker thread that competes with the loop for the interpreter on a
busy machine."""
MEMORY_BOUND = 6 * LIMIT
"""Python allocations a capped read may peak at (the answer and its copies), far below the files."""

PLANT = f"""
set -e
head -c 50000000 /dev/zero | tr '\\0' x > line.txt
truncate -s 1G sparse.bin
mkdir bulk
for number in $(seq 10 29); do truncate -s 10M "bulk/$number.txt"; done
mkdir -p {{outside}}
printf '{SECRET}\\n' > {{outside}}/secret.txt
"""

T = TypeVar("T")


def task() -> Task:
    return Task(
        id="fs-hostile",
        domain="ds",
        subdomain="filesystem",
        instruction="Judge this.",
        initial_state=DirectoryTreeState(kind="directory_tree", path="initial"),
    )


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    initial = tmp_path / "task" / "initial"
    (initial / "docs").mkdir(parents=True)
    (initial / "notes.txt").write_text("inside\n")
    (initial / "docs" / "a.md").write_text("# a\n")
    return tmp_path / "task"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Bed:
    sandbox: FilesystemSandbox
    outside: str
    """A directory next to the tree (on the host, or in the container) holding the secret."""

    def fingerprint(self) -> str:
        """Paths, kinds, sizes, modes and times of the tree and the outside directory, and the
        content of every file up to 1 MB (the big planted files are sparse or uniform)."""
        script = (
            f"find {self.sandbox.root} {self.outside} -printf '%p|%y|%s|%m|%T@|%n|%l\\n' | sort;"
            f" find {self.sandbox.root} {self.outside} -type f -size -1M -exec sha256sum {{}} +"
            " | sort"
        )
        return run_in_tree(self.sandbox, script)


@pytest.fixture
async def bed(backend: str, task_dir: Path, tmp_path: Path) -> AsyncIterator[Bed]:
    outside = "/outside" if backend == "docker" else str(tmp_path / "outside")
    async with filesystem_provider(backend) as provider:
        sandbox = await provider.create(task(), task_dir)
        assert isinstance(sandbox, FilesystemSandbox)
        async with sandbox:
            run_in_tree(sandbox, PLANT.format(outside=outside))
            yield Bed(sandbox, outside)


@asynccontextmanager
async def session(sandbox: FilesystemSandbox, *, read_only: bool) -> AsyncIterator[Client]:
    async with Client(filesystem_server(sandbox.tree, read_only=read_only).server()) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@dataclass
class Watched:
    longest_stall: float
    peak_bytes: int
    seconds: float


async def watched(call: Awaitable[T]) -> tuple[T, Watched]:
    """Run ``call`` while a 10 ms ticker runs beside it and Python allocations are traced."""
    stalls: list[float] = []
    stop = asyncio.Event()

    async def tick() -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = loop.time()
            stalls.append(now - last - 0.01)
            last = now

    # What this measures is the call's own hold on the loop. A full collection over the heap that
    # earlier tests left behind runs on whichever thread allocates (slowed further by tracemalloc)
    # and once stalled the loop past the bound on its own; that heap is set aside first.
    gc.collect()
    gc.freeze()
    ticker = asyncio.create_task(tick())
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = await call
    finally:
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        stop.set()
        await ticker
        gc.unfreeze()
    return result, Watched(max(stalls, default=0.0), peak, seconds)


def bytes_read_by_this_process() -> int:
    """``rchar`` of ``/proc/self/io``: every byte this process's read calls returned."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


async def test_a_huge_single_line_is_read_capped_and_off_the_loop(bed: Bed) -> None:
    before = bed.fingerprint()
    root = bed.sandbox.root
    async with session(bed.sandbox, read_only=True) as client:
        for arguments, note in (
            ({"head": 3}, f"[cut: the first 3 lines of {root}/line.txt run past the read limit"),
            ({"tail": 3}, f"[cut: the last 3 lines of {root}/line.txt run past the read limit"),
            ({}, f"[cut: {root}/line.txt holds 50000000 bytes, past the read limit"),
        ):
            read_before = bytes_read_by_this_process()
            result, watch = await watched(
                client.call_tool("read_text_file", {"path": "line.txt", **arguments})
            )
            read = bytes_read_by_this_process() - read_before
            text = text_of(result)
            assert not result.is_error
            assert note in text
            assert "x" * LIMIT in text
            assert "x" * (LIMIT + 1) not in text
            assert watch.longest_stall < STALL_BOUND, (arguments, watch)
            assert watch.peak_bytes < MEMORY_BOUND, (arguments, watch)
            if bed.outside.startswith("/outside"):
                continue  # a Docker tree reads in its container: the process reads the answer
            assert read < LIMIT + 1024 * 1024, (arguments, read)
    assert bed.fingerprint() == before


async def test_a_sparse_gigabyte_is_capped_and_refused_where_a_part_is_useless(bed: Bed) -> None:
    before = bed.fingerprint()
    root = bed.sandbox.root
    async with session(bed.sandbox, read_only=True) as client:
        for arguments in ({}, {"head": 2}, {"tail": 2}):
            result, watch = await watched(
                client.call_tool("read_text_file", {"path": "sparse.bin", **arguments})
            )
            text = text_of(result)
            assert f"of {1024**3} bytes]" in text or f"holds {1024**3} bytes" in text
            assert text.count("\0") == LIMIT
            assert watch.longest_stall < STALL_BOUND, (arguments, watch)
            assert watch.peak_bytes < MEMORY_BOUND, (arguments, watch)
        media, watch = await watched(client.call_tool("read_media_file", {"path": "sparse.bin"}))
        assert media.is_error
        assert text_of(media) == (
            f"Error: {root}/sparse.bin holds more than the read limit of {LIMIT} bytes: not read"
        )
        assert watch.peak_bytes < MEMORY_BOUND
    async with session(bed.sandbox, read_only=False) as writer:
        edit = await writer.call_tool(
            "edit_file", {"path": "sparse.bin", "edits": [{"oldText": "\0", "newText": "x"}]}
        )
        assert text_of(edit) == (
            f"Error: {root}/sparse.bin holds {1024**3} bytes, more than edit_file reads"
            f" ({LIMIT}): not edited"
        )
    assert bed.fingerprint() == before


async def test_read_multiple_files_of_many_big_files_is_capped_in_total(bed: Bed) -> None:
    paths = ["notes.txt", *(f"bulk/{number}.txt" for number in range(10, 30))]
    async with session(bed.sandbox, read_only=True) as client:
        result, watch = await watched(client.call_tool("read_multiple_files", {"paths": paths}))
    parts = text_of(result).split("\n---\n")
    assert parts[0] == "notes.txt:\ninside\n\n"
    assert parts[1].startswith("bulk/10.txt:\n")
    assert parts[1].count("\0") == LIMIT - len("inside\n")
    assert "all the files of one call sharing a read limit" in parts[1]
    assert all("Error - not read: this answer already holds" in part for part in parts[2:])
    assert len(parts) == len(paths)
    assert len(text_of(result)) < LIMIT + 20_000
    assert watch.longest_stall < STALL_BOUND, watch
    assert watch.peak_bytes < MEMORY_BOUND, watch


async def test_glob_patterns_built_to_backtrack_answer_without_stalling(bed: Bed) -> None:
    # A backtracking matcher needs time exponential in the name's length for these patterns.
    run_in_tree(
        bed.sandbox,
        "mkdir names && cd names && for i in $(seq 10 69); do touch $(printf 'a%.0s' $(seq 240))$i;"
        " done && touch $(printf 'a%.0s' $(seq 240))b",
    )
    long_b = "a" * 240 + "b"
    async with session(bed.sandbox, read_only=True) as client:
        found, watch = await watched(
            client.call_tool(
                "search_files",
                {"path": "names", "pattern": "*(*(a|aa))b", "excludePatterns": ["*a*a*a*a*a*c"]},
            )
        )
        assert text_of(found) == f"{bed.sandbox.root}/names/{long_b}"
        assert watch.longest_stall < STALL_BOUND, watch
        listed, watch = await watched(
            client.call_tool(
                "directory_tree", {"path": "names", "excludePatterns": ["*(*(a|aa))[0-9][0-9]"]}
            )
        )
        assert json.loads(text_of(listed)) == [{"name": long_b, "type": "file"}]
        assert watch.longest_stall < STALL_BOUND, watch
        refused = await client.call_tool(
            "search_files", {"path": "names", "pattern": "{1..999999999}"}
        )
        assert text_of(refused) == (
            "Error: Invalid pattern: the range {1..999999999} has more than 10000 values"
        )


async def test_a_time_limit_interrupts_a_slow_call_and_the_server_goes_on(bed: Bed) -> None:
    # 30,000 directories: listing them all is honest work that takes seconds on either backend.
    run_in_tree(
        bed.sandbox,
        "for i in $(seq 100); do mkdir -p many/$i; (cd many/$i && seq 300 | xargs mkdir); done",
    )
    async with session(bed.sandbox, read_only=True) as client:

        async def limited() -> BaseException | None:
            try:
                await asyncio.wait_for(client.call_tool("directory_tree", {"path": "many"}), 2)
            except TimeoutError as error:
                return error
            return None

        outcome, watch = await watched(limited())
        assert isinstance(outcome, TimeoutError)
        assert watch.seconds < 3.5, watch
        assert watch.longest_stall < STALL_BOUND, watch
        answer, later = await watched(client.call_tool("read_text_file", {"path": "notes.txt"}))
        assert text_of(answer) == "inside\n"
        assert later.seconds < 5, later


async def test_a_writing_judge_stops_at_its_quota(backend: str, task_dir: Path) -> None:
    quota = 256 * 1024 * 1024
    content = "x" * 10_000_000
    each = charge("file", len(content))
    async with filesystem_provider(backend, quota_bytes=quota) as provider:
        snapshot = await (await provider.create(task(), task_dir)).freeze()
        assert isinstance(snapshot, FilesystemSnapshot)
        async with snapshot, cloned(snapshot) as clone:
            start = clone.tree.usage
            fits = (quota - start) // each
            async with session(clone, read_only=False) as judge:
                answers = [
                    await judge.call_tool(
                        "write_file", {"path": f"big-{number:03d}.txt", "content": content}
                    )
                    for number in range(100)
                ]
            assert [answer.is_error for answer in answers] == [False] * fits + [True] * (100 - fits)
            assert fits == 26
            holds = start + fits * each
            for number, answer in enumerate(answers[fits:], start=fits):
                assert text_of(answer) == (
                    f"Error: quota reached: the sandbox holds {holds} of {quota} bytes; this"
                    f" change to {clone.root}/big-{number:03d}.txt would add {each} more"
                )
            stored = int(run_in_tree(clone, "du -sb --apparent-size . | cut -f1"))
            assert fits * len(content) <= stored <= quota
            names = set(run_in_tree(clone, "ls -A").split())
            assert names == {"docs", "notes.txt", *(f"big-{n:03d}.txt" for n in range(fits))}
            assert clone.tree.usage == await clone.tree.measure() == holds
            # The frozen state the next judge gets is untouched.
            view = await snapshot.clone(writable=False)
            assert [entry.path for entry in await view.tree.walk()] == [
                "docs",
                "docs/a.md",
                "notes.txt",
            ]


DENIED = "Access denied"
LOOPED = "ELOOP: too many symbolic links|ENOTDIR: not a directory"


async def test_escapes_from_a_writable_clone_are_still_refused(
    backend: str, task_dir: Path, tmp_path: Path
) -> None:
    outside = "/outside" if backend == "docker" else str(tmp_path / "outside")
    async with filesystem_provider(backend) as provider:
        sandbox = await provider.create(task(), task_dir)
        assert isinstance(sandbox, FilesystemSandbox)
        run_in_tree(sandbox, "ln -s /etc link-etc && ln -s loop-b loop-a && ln -s loop-a loop-b")
        snapshot = await sandbox.freeze()
        async with snapshot, cloned(snapshot) as clone:
            run_in_tree(clone, f"mkdir -p {outside} && printf '{SECRET}\\n' > {outside}/secret")
            bed = Bed(clone, outside)
            before = bed.fingerprint()
            root = clone.root
            attempts: list[tuple[str, dict[str, Any], str]] = [
                ("read_text_file", {"path": "../outside/secret"}, DENIED),
                ("read_text_file", {"path": f"{root}/../../{outside}/secret"}, DENIED),
                ("read_text_file", {"path": f"{outside}/secret"}, DENIED),
                ("read_text_file", {"path": "/etc/passwd"}, DENIED),
                ("read_text_file", {"path": "link-etc/passwd"}, DENIED),
                ("list_directory", {"path": "link-etc"}, DENIED),
                ("write_file", {"path": "link-etc/planted", "content": "x"}, DENIED),
                ("read_text_file", {"path": "loop-a"}, "ELOOP"),
                # through a loop the Docker backend's shell finds no directory: ENOTDIR
                ("write_file", {"path": "loop-a/x", "content": "x"}, LOOPED),
                ("get_file_info", {"path": "loop-b/x"}, LOOPED),
            ]
            async with session(clone, read_only=False) as judge:
                for tool, arguments, expected in attempts:
                    result = await judge.call_tool(tool, arguments)
                    shown = text_of(result)
                    assert result.is_error, (tool, arguments, shown)
                    assert any(fragment in shown for fragment in expected.split("|")), shown
                    assert SECRET not in shown
                # A directory symlink pointing out, made inside the tree while the server runs
                # (as a verifier or another process could): followed nowhere.
                run_in_tree(clone, f"ln -s {outside} made-later")
                before = bed.fingerprint()
                later: list[tuple[str, dict[str, Any]]] = [
                    ("read_text_file", {"path": "made-later/secret"}),
                    ("read_multiple_files", {"paths": ["made-later/secret"]}),
                    ("write_file", {"path": "made-later/planted", "content": "x"}),
                    ("create_directory", {"path": "made-later/sub"}),
                    ("move_file", {"source": "notes.txt", "destination": "made-later/n.txt"}),
                    ("search_files", {"path": "made-later", "pattern": "**"}),
                    ("directory_tree", {"path": "made-later"}),
                ]
                for tool, arguments in later:
                    result = await judge.call_tool(tool, arguments)
                    assert DENIED in text_of(result), (tool, text_of(result))
                    assert SECRET not in text_of(result)
            assert bed.fingerprint() == before

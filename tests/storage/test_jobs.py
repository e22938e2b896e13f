"""The resumable job runner: resume, torn lines, crashes, the concurrency bound, exclusive
groups."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from storage.jobs import Job, ResumableJobs
from storage.jsonl import read_jsonl
from storage.locks import FolderBusyError, holder_of


class Done(BaseModel):
    key: str
    source: str
    """What the job was given (stands for a digest that decides whether a record is current)."""


def _key(record: Done) -> str:
    return record.key


def _jobs(*keys: str, source: str = "v1") -> list[Job[str]]:
    return [Job(key=key, item=f"{key}:{source}", name=f"item {key}") for key in keys]


async def _make(item: str) -> Done:
    key, source = item.split(":")
    await asyncio.sleep(0)
    return Done(key=key, source=source)


async def test_a_second_invocation_skips_the_jobs_already_done(tmp_path: Path) -> None:
    path = tmp_path / "out" / "done.jsonl"
    first = ResumableJobs(path, Done, _key)
    assert first.earlier == {}
    plan = first.plan(_jobs("a", "b", "c"))
    assert [job.key for job in plan.pending] == ["a", "b", "c"]
    seen: list[str] = []
    results = await first.run(plan.pending, _make, on_result=lambda r: seen.append(r.key))
    assert sorted(results.made) == sorted(seen) == ["a", "b", "c"]
    assert results.crashes == []

    second = ResumableJobs(path, Done, _key)
    plan = second.plan(_jobs("a", "b", "c", "d"))
    assert list(plan.reused) == ["a", "b", "c"]
    assert [job.key for job in plan.pending] == ["d"]
    await second.run(plan.pending, _make)
    assert [record.key for record in read_jsonl(path, Done)] == ["a", "b", "c", "d"]


async def test_a_record_that_is_no_longer_current_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    jobs = ResumableJobs(path, Done, _key)
    await jobs.run(jobs.plan(_jobs("a", "b")).pending, _make)
    again = ResumableJobs(path, Done, _key)
    # "b" changed since: its earlier record was made from v1.
    changed = [*_jobs("a"), *_jobs("b", source="v2")]
    plan = again.plan(changed, is_current=lambda job, record: job.item.endswith(record.source))
    assert list(plan.reused) == ["a"]
    assert [job.key for job in plan.pending] == ["b"]
    await again.run(plan.pending, _make)
    # The last record per key wins when the file is read again.
    assert ResumableJobs(path, Done, _key).earlier["b"].source == "v2"


async def test_fresh_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    jobs = ResumableJobs(path, Done, _key)
    await jobs.run(jobs.plan(_jobs("a")).pending, _make)
    fresh = ResumableJobs(path, Done, _key, fresh=True)
    assert fresh.earlier == {}
    assert not path.exists()
    assert [job.key for job in fresh.plan(_jobs("a")).pending] == ["a"]


async def test_a_torn_last_line_is_redone_and_does_not_swallow_the_next_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "done.jsonl"
    path.write_text(Done(key="a", source="v1").model_dump_json() + "\n" + '{"key": "b", "sou')
    jobs = ResumableJobs(path, Done, _key)
    assert list(jobs.earlier) == ["a"]
    plan = jobs.plan(_jobs("a", "b", "c"))
    assert [job.key for job in plan.pending] == ["b", "c"]
    await jobs.run(plan.pending, _make, concurrency=1)
    assert sorted(ResumableJobs(path, Done, _key).earlier) == ["a", "b", "c"]


async def test_one_crash_is_reported_by_name_and_the_others_finish(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"

    async def fragile(item: str) -> Done:
        if item.startswith("b:"):
            raise OSError("disk on fire")
        return await _make(item)

    jobs = ResumableJobs(path, Done, _key)
    results = await jobs.run(jobs.plan(_jobs("a", "b", "c")).pending, fragile, concurrency=1)
    assert sorted(results.made) == ["a", "c"]
    assert [crash.job.key for crash in results.crashes] == ["b"]
    assert results.problems == ["item b crashed: OSError: disk on fire"]
    # The crashed job has no record, so the next invocation runs it again.
    assert [
        job.key for job in ResumableJobs(path, Done, _key).plan(_jobs("a", "b", "c")).pending
    ] == ["b"]


class Abort(BaseException):
    """Stands for a stop that is not an error of one job (like a cancellation)."""


async def test_a_stop_that_is_not_an_error_is_raised_not_reported(tmp_path: Path) -> None:
    async def aborted(item: str) -> Done:
        if item.startswith("b:"):
            raise Abort
        return await _make(item)

    jobs = ResumableJobs(tmp_path / "done.jsonl", Done, _key)
    with pytest.raises(Abort):
        await jobs.run(jobs.plan(_jobs("a", "b")).pending, aborted)


async def test_no_more_than_the_concurrency_bound_run_at_once(tmp_path: Path) -> None:
    running = 0
    peak = 0

    async def counted(item: str) -> Done:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return await _make(item)

    jobs = ResumableJobs(tmp_path / "done.jsonl", Done, _key)
    keys = [f"k{i}" for i in range(12)]
    results = await jobs.run(jobs.plan(_jobs(*keys)).pending, counted, concurrency=3)
    assert len(results.made) == 12
    assert peak == 3


async def test_jobs_of_one_exclusive_group_never_overlap(tmp_path: Path) -> None:
    active: dict[str, int] = {}
    overlaps: list[str] = []
    peak_total = 0

    async def grouped(item: str) -> Done:
        nonlocal peak_total
        group = item.split(":", maxsplit=1)[0][0]  # "x1" -> group "x"
        active[group] = active.get(group, 0) + 1
        if active[group] > 1 and group == "x":
            overlaps.append(item)
        peak_total = max(peak_total, sum(active.values()))
        await asyncio.sleep(0.01)
        active[group] -= 1
        return await _make(item)

    jobs_list = [Job(key=f"x{i}", item=f"x{i}:v1", exclusive="x") for i in range(4)]
    jobs_list += [Job(key=f"y{i}", item=f"y{i}:v1") for i in range(4)]
    jobs = ResumableJobs(tmp_path / "done.jsonl", Done, _key)
    results = await jobs.run(jobs_list, grouped, concurrency=8)
    assert len(results.made) == 8
    assert overlaps == []
    # The free jobs still ran alongside the group's one-at-a-time jobs.
    assert peak_total >= 3


async def test_a_job_waiting_for_its_group_holds_no_slot(tmp_path: Path) -> None:
    order: list[str] = []
    release = asyncio.Event()

    async def work(item: str) -> Done:
        key = item.split(":", maxsplit=1)[0]
        order.append(key)
        if key == "g1":
            await release.wait()
        return await _make(item)

    jobs_list = [
        Job(key="g1", item="g1:v1", exclusive="g"),
        Job(key="g2", item="g2:v1", exclusive="g"),
        Job(key="free", item="free:v1"),
    ]
    jobs = ResumableJobs(tmp_path / "done.jsonl", Done, _key)
    running = asyncio.ensure_future(jobs.run(jobs_list, work, concurrency=2))
    for _ in range(20):
        await asyncio.sleep(0)
    # g1 holds one slot and the group; g2 waits for the group without a slot, so "free" runs.
    assert order == ["g1", "free"]
    release.set()
    results = await running
    assert order == ["g1", "free", "g2"]
    assert sorted(results.made) == ["free", "g1", "g2"]


def test_two_jobs_with_one_key_are_refused(tmp_path: Path) -> None:
    jobs = ResumableJobs(tmp_path / "done.jsonl", Done, _key)
    with pytest.raises(ValueError, match="'a'"):
        jobs.plan([*_jobs("a"), *_jobs("a")])


HOLD = """\
import sys, time
from pathlib import Path
from storage.locks import lock_folder
lock = lock_folder(Path(sys.argv[1]))
print("locked", flush=True)
time.sleep(60)
"""


async def test_a_folder_another_process_writes_is_refused_before_anything_is_touched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "out" / "done.jsonl"
    path.parent.mkdir()
    before = Done(key="a", source="v1").model_dump_json() + "\n" + '{"key": "b", "sou'
    path.write_text(before)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path.parent)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(FolderBusyError, match=f"pid {holder.pid}"):
            ResumableJobs(path, Done, _key, fresh=True)
        # Neither deleted (fresh), nor repaired: the holder may be writing that last line.
        assert path.read_text() == before
    finally:
        holder.kill()
        holder.wait()
    with ResumableJobs(path, Done, _key) as jobs:
        assert jobs.repaired is not None
        assert "torn last line" in jobs.repaired
        assert list(jobs.earlier) == ["a"]
    # Closed: another process may now take the folder.
    assert holder_of(path.parent) is None


async def test_an_interrupted_record_is_made_once_after_the_repair(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    with ResumableJobs(path, Done, _key) as jobs:
        await jobs.run(jobs.plan(_jobs("a", "b", "c")).pending, _make, concurrency=1)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 7])  # the kill tore the last record
    with ResumableJobs(path, Done, _key) as again:
        plan = again.plan(_jobs("a", "b", "c", "d"))
        assert len(plan.pending) == 2  # the torn one and the new one
        await again.run(plan.pending, _make)
    lines = path.read_text().splitlines()
    keys = [Done.model_validate_json(line).key for line in lines]  # every line parses
    assert sorted(keys) == ["a", "b", "c", "d"]

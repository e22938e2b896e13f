"""Re-checks have the machine to themselves: the steps of replays go through side by side, a
re-check waits for the steps in flight and holds new ones back until it is done."""

from __future__ import annotations

import asyncio

import pytest

from replay.recheck_gate import RecheckGate, recheck_gate


async def test_steps_go_through_side_by_side() -> None:
    gate = RecheckGate()
    async with gate.step(), gate.step():
        assert gate.steps_in_flight == 2
    assert gate.steps_in_flight == 0


async def test_a_recheck_waits_for_steps_in_flight_and_holds_new_ones_back() -> None:
    gate = RecheckGate()
    events: list[str] = []
    first_step_may_end = asyncio.Event()
    recheck_may_end = asyncio.Event()

    async def step(name: str, until: asyncio.Event | None = None) -> None:
        async with gate.step():
            events.append(f"{name} starts")
            if until is not None:
                await until.wait()
            events.append(f"{name} ends")

    async def recheck() -> None:
        async with gate.alone():
            events.append("re-check starts")
            await recheck_may_end.wait()
            events.append("re-check ends")

    in_flight = asyncio.create_task(step("step 1", first_step_may_end))
    await asyncio.sleep(0.01)
    checking = asyncio.create_task(recheck())
    await asyncio.sleep(0.01)
    later = asyncio.create_task(step("step 2"))
    await asyncio.sleep(0.05)
    assert events == ["step 1 starts"]  # the re-check waits for step 1; step 2 waits too
    first_step_may_end.set()
    await asyncio.sleep(0.05)
    assert events == ["step 1 starts", "step 1 ends", "re-check starts"]
    recheck_may_end.set()
    await asyncio.gather(in_flight, checking, later)
    assert events[3:] == ["re-check ends", "step 2 starts", "step 2 ends"]


async def test_a_recheck_cancelled_while_waiting_lets_steps_through() -> None:
    gate = RecheckGate()
    step_may_end = asyncio.Event()

    async def long_step() -> None:
        async with gate.step():
            await step_may_end.wait()

    in_flight = asyncio.create_task(long_step())
    await asyncio.sleep(0.01)

    async def recheck() -> None:
        async with gate.alone():
            pytest.fail("the re-check went through beside a step in flight")

    waiting = asyncio.create_task(recheck())
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    async with asyncio.timeout(1):  # new steps are not held back by the cancelled re-check
        async with gate.step():
            assert gate.steps_in_flight == 2
    step_may_end.set()
    await in_flight


async def test_the_replays_of_one_event_loop_share_one_gate() -> None:
    assert recheck_gate() is recheck_gate()

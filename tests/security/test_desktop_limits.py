"""A desktop step killed by a limit says which limit, on real desktops: recorded code that
allocates past the desktop's memory cap fails naming the cap, and code that starts processes
until none more may start fails naming the process limit (local and Docker backends), not only
"the action failed"."""

from __future__ import annotations

import textwrap

import pytest

from dataset.actions import PyAutoGuiAction
from sandboxes.desktop.local import LocalDesktopProvider
from tests.sandboxes.desktop.helpers import BACKENDS, desktop_provider, start, word_document

CAP = 1536 * 2**20

PROCESSES = 384
"""A process limit below the default, so the test starts fewer processes (LibreOffice and the
session hold about a hundred threads)."""

FORK_UNTIL_REFUSED = textwrap.dedent(
    """
    import os
    read, write = os.pipe()
    started = 0
    try:
        while True:
            if os.fork() == 0:  # each child waits until the step's process is gone
                os.close(write)
                os.read(read, 1)
                os._exit(0)
            started += 1
    finally:
        print("started", started)
    """
)


@pytest.mark.slow
@pytest.mark.desktop
async def test_a_step_killed_by_the_memory_cap_names_the_cap() -> None:
    async with (
        LocalDesktopProvider(memory_bytes=CAP) as provider,
        await start(provider, "memo.docx", word_document("Memory")) as desktop,
    ):
        if getattr(desktop.handle, "cap", None) is None:
            pytest.fail("no memory cgroup could be made here, so no cap to be killed by")
        outcome = await desktop.perform(
            PyAutoGuiAction(code="block = b'x' * (3 * 2**30)\nprint(len(block))"), timeout=120
        )
    assert outcome.status == "failed", outcome.output
    assert "killed by the desktop's memory cap (1,536 MiB)" in outcome.error


@pytest.mark.slow
@pytest.mark.desktop
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_step_stopped_by_the_process_limit_names_the_limit(backend: str) -> None:
    async with (
        desktop_provider(backend, processes=PROCESSES, ready_timeout=90) as provider,
        await start(provider, "memo.docx", word_document("Processes")) as desktop,
    ):
        outcome = await desktop.perform(PyAutoGuiAction(code=FORK_UNTIL_REFUSED), timeout=120)
        # The children left with the step: the desktop goes on.
        after = await desktop.perform(PyAutoGuiAction(code="print('still here')"), timeout=60)
    assert outcome.status == "failed", outcome.output
    started = int(outcome.output.rsplit("started", 1)[1].split()[0])
    assert 0 < started < PROCESSES, outcome.output
    assert f"stopped by the desktop's process limit ({PROCESSES} processes)" in outcome.error
    assert "memory cap" not in outcome.error
    assert after.status == "done", after.error
    assert "still here" in after.output

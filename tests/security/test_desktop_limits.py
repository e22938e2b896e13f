"""A desktop step killed by a limit says which limit, on a real local desktop: recorded code that
allocates past the desktop's memory cap fails naming the cap, not only "the action failed"."""

from __future__ import annotations

import pytest

from dataset.actions import PyAutoGuiAction
from sandboxes.desktop.local import LocalDesktopProvider
from tests.sandboxes.desktop.helpers import start, word_document

CAP = 1536 * 2**20


@pytest.mark.slow
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

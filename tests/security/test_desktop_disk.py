"""A desktop's disk is capped on every backend: recorded code that writes 4 GiB into the home
folder is stopped at the home's quota and the failed step names that quota, and no other place
the desktop's user can write takes more than its own fixed size (the host disk takes nothing)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import AsyncIterator

import pytest

from dataset.actions import PyAutoGuiAction
from sandboxes.desktop.docker import DockerDesktopProvider
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.sandbox import DesktopProvider
from tests.sandboxes.desktop.helpers import start, word_document

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

HOME_QUOTA = 256 * 2**20
MEMORY_CAP = 3 * 2**30

FILL_HOME = textwrap.dedent(
    """
    import os
    written = 0
    try:
        with open(os.path.expanduser("~/fill.bin"), "wb") as out:
            for _ in range(4096):  # 4 GiB in 1 MiB blocks
                out.write(b"x" * 2**20)
                out.flush()
                written += 1
    finally:
        print("written MiB:", written)
    """
)

FILL_EVERYWHERE = textwrap.dedent(
    """
    import json, os
    places = [os.path.expanduser("~"), "/tmp", "/var/tmp", "/dev/shm", "/",
              "/run/user/1000", "/run/agentjudge", "/run/agentjudge-seed", "/opt", "/var/lock"]
    found = {}
    for place in places:
        written = 0
        name = os.path.join(place, "fill-%d.bin" % len(found))
        try:
            with open(name, "wb") as out:
                for _ in range(4096):
                    out.write(b"x" * 2**20)
                    out.flush()
                    written += 1
        except OSError:
            pass
        found[place] = written
        try:
            os.unlink(name)
        except OSError:
            pass
    print(json.dumps(found))
    """
)


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[DesktopProvider]:
    if request.param == "local":
        async with LocalDesktopProvider(memory_bytes=MEMORY_CAP, home_bytes=HOME_QUOTA) as made:
            yield made
        return
    from sandboxes.desktop.image import build_desktop_image

    image = build_desktop_image()  # cached after the first build (make images)
    async with DockerDesktopProvider(
        image, memory_bytes=MEMORY_CAP, home_bytes=HOME_QUOTA, ready_timeout=90
    ) as made:
        yield made


async def test_a_step_filling_the_home_is_stopped_at_the_named_quota(
    provider: DesktopProvider,
) -> None:
    async with await start(provider, "memo.docx", word_document("Quota")) as desktop:
        outcome = await desktop.perform(PyAutoGuiAction(code=FILL_HOME), timeout=300)
        # The desktop goes on: the document is still there and it can still be read.
        assert await desktop.read_document() is not None
    assert outcome.status == "failed", outcome.output
    written = int(outcome.output.rsplit("written MiB:", 1)[1].split()[0])
    assert written <= HOME_QUOTA // 2**20, written
    assert "No space left on device" in outcome.error
    assert "stopped by the desktop home's disk quota (256 MiB)" in outcome.error


async def test_no_place_the_desktop_writes_takes_more_than_its_size(
    provider: DesktopProvider,
) -> None:
    async with await start(provider, "memo.docx", word_document("Places")) as desktop:
        outcome = await desktop.perform(PyAutoGuiAction(code=FILL_EVERYWHERE), timeout=600)
    assert outcome.status == "done", outcome.error
    written = json.loads(outcome.output.strip().splitlines()[-1])
    assert written, outcome.output
    # The home holds at most its quota; every other place at most 256 MiB, or nothing.
    assert written.pop("/home/user") <= HOME_QUOTA // 2**20
    assert all(mib <= 256 for mib in written.values()), written

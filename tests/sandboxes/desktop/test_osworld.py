"""The ``osworld`` desktop backend, against the project's control server over HTTP.

The test's "OSWorld VM" is a container of the desktop image whose control server listens on TCP,
published on 127.0.0.1 only: the backend reaches it by URL, as it would an OSWorld VM.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path, PurePosixPath

import docker
import docx
import pytest
from docker.types import Mount

from dataset.actions import Computer13Action
from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.docker import CONTROL_SERVER_SOURCE, MOUNT_ROOT
from sandboxes.desktop.osworld import OsworldDesktopProvider, parse_urls
from sandboxes.desktop.sandbox import DocumentFile
from sandboxes.docker.containers import remove_container
from sandboxes.docker.leftovers import run_labels
from sandboxes.runs import current_run
from tests.sandboxes.desktop.backend_helpers import WRITER_TEXT, eventually, wait_for_tree


def action(kind: str, **parameters: object) -> Computer13Action:
    return Computer13Action.model_validate({"action_type": kind, "parameters": parameters})


SERVER_COMMAND = [
    *("python3", "-m", "control_server", "session", "--host", "0.0.0.0", "--port", "5000"),
    *("--display", ":0", "--profile", "/home/user/.office-profile"),
]
"""The control server on TCP inside the container (published on 127.0.0.1 only)."""


@pytest.fixture
def remote_desktop(desktop_image: str) -> Iterator[str]:
    """A desktop whose control server answers over TCP on 127.0.0.1; its URL."""
    engine = docker.from_env()
    container = engine.containers.run(
        desktop_image,
        command=SERVER_COMMAND,
        name=current_run().new_name("osworldvm"),
        user="1000:1000",
        working_dir="/home/user",
        environment={"PYTHONPATH": MOUNT_ROOT, "PYTHONDONTWRITEBYTECODE": "1"},
        labels=run_labels("desktop"),
        mounts=[
            Mount(
                f"{MOUNT_ROOT}/control_server",
                str(CONTROL_SERVER_SOURCE),
                type="bind",
                read_only=True,
            )
        ],
        ports={"5000/tcp": ("127.0.0.1", None)},
        mem_limit=2 * 2**30,
        detach=True,
    )
    try:
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["5000/tcp"][0]["HostPort"]
        yield f"http://127.0.0.1:{port}"
    finally:
        remove_container(container)
        engine.close()


@pytest.fixture
async def provider(remote_desktop: str) -> AsyncIterator[OsworldDesktopProvider]:
    made = OsworldDesktopProvider(remote_desktop, ready_timeout=90)
    try:
        yield made
    finally:
        await made.aclose()


@pytest.mark.docker
@pytest.mark.slow
async def test_document_is_uploaded_opened_edited_saved_and_cleaned_up(
    provider: OsworldDesktopProvider, remote_desktop: str, writer_document: Path
) -> None:
    sandbox = await provider.start_desktop(
        DocumentFile(PurePosixPath(writer_document.name), writer_document.read_bytes())
    )
    assert sandbox.document == PurePosixPath("/home/user/survey.docx")
    assert provider.leased == {remote_desktop}
    await wait_for_tree(sandbox.client, WRITER_TEXT)

    added = "Checked over HTTP"
    await sandbox.perform(action("HOTKEY", keys=["ctrl", "end"]))
    await sandbox.perform(action("PRESS", key="enter"))
    await sandbox.perform(action("TYPING", text=added))
    await sandbox.perform(action("HOTKEY", keys=["ctrl", "s"]), wait_seconds=0.5)

    async def keep_format_question() -> bool | None:
        titles = [title for _, title in await sandbox.client.windows() or []]
        return True if any("format" in title.lower() for title in titles) else None

    await eventually(keep_format_question, 20, "the keep-format question")
    await sandbox.perform(action("PRESS", key="enter"))

    async def saved() -> list[str] | None:
        data = await sandbox.read_document()
        assert data is not None
        try:
            paragraphs = [p.text for p in docx.Document(io.BytesIO(data)).paragraphs]
        except Exception:
            return None
        return paragraphs if added in paragraphs else None

    assert (await eventually(saved, 30, "the saved document"))[0] == WRITER_TEXT

    await sandbox.destroy()
    assert provider.leased == frozenset()
    async with DesktopClient(remote_desktop) as client:

        async def office_closed() -> bool | None:
            titles = [title for _, title in await client.windows() or []]
            return None if any("survey" in title for title in titles) else True

        await eventually(office_closed, 20, "LibreOffice to close")
        with pytest.raises(DesktopControlError, match="404"):
            await client.download_file("/home/user/survey.docx")


@pytest.mark.docker
@pytest.mark.slow
async def test_one_sandbox_per_desktop_at_a_time(
    provider: OsworldDesktopProvider, remote_desktop: str
) -> None:
    first = await provider.start_desktop(None)
    waiting = asyncio.create_task(provider.start_desktop(None))
    await asyncio.sleep(1.0)
    assert not waiting.done()  # the only desktop is leased
    await first.destroy()
    second = await asyncio.wait_for(waiting, 30)
    assert provider.leased == {remote_desktop}
    await second.destroy()
    assert provider.leased == frozenset()


async def test_unreachable_desktop_is_a_clear_error_and_is_handed_back() -> None:
    provider = OsworldDesktopProvider("http://127.0.0.1:9", ready_timeout=0.5)
    with pytest.raises(SandboxError, match=r"http://127\.0\.0\.1:9 did not answer"):
        await provider.start_desktop(None)
    assert provider.leased == frozenset()
    await provider.aclose()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ftp://vm:5000", "not the http"),
        ("vm:5000", "not the http"),
        ("http://a:5000, http://a:5000/", "given twice"),
        (" , ", "at least one"),
    ],
)
def test_bad_urls_are_refused(text: str, message: str) -> None:
    with pytest.raises(SandboxError, match=message):
        parse_urls(text)


def test_urls_are_split_and_normalised() -> None:
    assert parse_urls("http://a:5000/, https://b") == ("http://a:5000", "https://b")

"""OSWorld's setup steps (``metadata.osworld_config``) carried out when a desktop starts a task:
``sleep``, ``execute`` (OSWorld's ``python -c`` commands too) and ``launch`` in their recorded
order after the document opens; a step that fails stops the start, naming it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dataset.models import DocumentState, Task
from sandboxes.base import SandboxError
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.setup_steps import setup_steps
from tests.sandboxes.desktop.helpers import word_document

DOCUMENT = "/home/user/Desktop/notes.docx"


def _task(folder: Path, steps: list[dict[str, object]]) -> Task:
    (folder / "files").mkdir(parents=True)
    (folder / "files" / "notes.docx").write_bytes(word_document("Setup notes"))
    config = [
        {"type": "download", "parameters": {"files": [{"url": "u", "path": DOCUMENT}]}},
        {"type": "open", "parameters": {"path": DOCUMENT}},
        *steps,
    ]
    return Task(
        id="setup-steps",
        domain="gui",
        subdomain="word",
        instruction="Look at the notes.",
        initial_state=DocumentState(
            path="files/notes.docx", application="writer", open_at=DOCUMENT
        ),
        metadata={"osworld_config": config},
    )


def test_only_the_steps_a_desktop_carries_out_are_listed(tmp_path: Path) -> None:
    task = _task(
        tmp_path,
        [
            {"type": "sleep", "parameters": {"seconds": 0.5}},
            {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://e.org"]}},
            {"type": "launch", "parameters": {"command": ["true"]}},
        ],
    )
    assert [(position, kind) for position, kind, _ in setup_steps(task)] == [
        (2, "sleep"),
        (4, "launch"),
    ]


@pytest.mark.desktop
async def test_setup_steps_run_inside_the_desktop_in_order(tmp_path: Path) -> None:
    marker = "/home/user/setup-marker.txt"
    task = _task(
        tmp_path,
        [
            {"type": "sleep", "parameters": {"seconds": 1}},
            {
                "type": "execute",
                "parameters": {
                    "command": ["python", "-c", f"open({marker!r}, 'w').write('first')"]
                },
            },
            {
                "type": "execute",
                "parameters": {"command": f"echo second >> {marker}", "shell": True},
            },
        ],
    )
    async with LocalDesktopProvider() as provider:
        started = time.monotonic()
        desktop = await provider.start_from(task, tmp_path)
        try:
            assert time.monotonic() - started >= 1.0
            assert await desktop.client.download_file(marker) == b"firstsecond\n"
        finally:
            await desktop.destroy()

        failing = _task(
            tmp_path / "failing",
            [{"type": "execute", "parameters": {"command": ["false"]}}],
        )
        with pytest.raises(SandboxError, match=r"setup step config\[2\] \(execute\).*exited 1"):
            await provider.start_from(failing, tmp_path / "failing")

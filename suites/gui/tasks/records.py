"""The task record of a GUI suite task: a document opened in LibreOffice from ``~/Documents``."""

from __future__ import annotations

from typing import Literal

from dataset.models import DocumentState, Task

Application = Literal["writer", "calc", "impress"]
SUBDOMAINS: dict[Application, str] = {"writer": "word", "calc": "excel", "impress": "ppt"}
"""The dataset's subdomain of each application."""


def gui_task(
    task_id: str, application: Application, file_name: str, instruction: str, kind: str
) -> Task:
    """The record of a task whose agent starts with ``~/Documents/<file_name>`` open."""
    return Task(
        id=task_id,
        domain="gui",
        subdomain=SUBDOMAINS[application],
        instruction=instruction,
        initial_state=DocumentState(
            path=file_name, application=application, open_at=f"/home/user/Documents/{file_name}"
        ),
        metadata={"task_kind": kind, "source_benchmark": "agentjudge-gui-suite"},
    )

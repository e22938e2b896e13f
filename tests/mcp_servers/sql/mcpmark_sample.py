"""The real MCPMark runs in ``../shared/mcpmark-sample`` (next to the checkout), read for tests.

Reads each run's ``messages.json`` on its own (pairing calls and outputs by ``call_id`` and
unwrapping the JSON-inside-JSON outputs), so the tests derive every expectation from the
recording and do not depend on the importer. Tests skip with a clear reason when the folder is
absent (and fail in CI, ``tests.shared_data``).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.actions import ToolCallAction
from dataset.models import Observation, Provenance, SqlSeedState, Step, Task, Trajectory
from mcp_servers.sql.agent_tools import INSFORGE, POSTGRES_MCP, SUPABASE
from tests.shared_data import SHARED, needs_shared

SAMPLE = SHARED / "mcpmark-sample"
"""Where the sample is expected: ``../shared/mcpmark-sample`` from the repository root."""

needs_sample = needs_shared(SAMPLE / "runs", "the real MCPMark runs (these tests replay them)")

SERVERS = {"crystaldba": POSTGRES_MCP, "supabase": SUPABASE, "insforge": INSFORGE}
"""The sample's server folders and the implementation each names."""

RECORDED_COLLATIONS = {"crystaldba": "en_US.utf8", "insforge": "en_US.utf8", "supabase": "C"}
"""How each server's recorded database sorted text, read off the sample itself: in
``chinook__sales_and_music_charts`` the crystaldba and insforge runs rank "Abraham, Martin And
John" before "A Cor Do Sol" (glibc's en_US skips spaces and punctuation at first), the supabase
run after it (byte order). A replay under another collation stores other ranks."""


@dataclass
class SampleCall:
    """One recorded call: what was asked and what the server answered."""

    name: str
    arguments: dict[str, Any]
    text: str
    flagged: bool
    """``isError`` as recorded (False for plain-text answers)."""

    @property
    def failed(self) -> bool:
        """Flagged, or answered with an error text (postgres-mcp does not flag its own)."""
        return self.flagged or self.text.lstrip().startswith("Error")


def chinook_runs() -> list[Path]:
    """The sample's Chinook runs (their state is the Chinook database plus what they did)."""
    return sorted(SAMPLE.glob("runs/*/run-*/chinook__*"))


def run_id(run: Path) -> str:
    return f"{run.parent.parent.name}/{run.name}"


def _unwrap(output: Any) -> tuple[str, bool]:
    value = output
    for _ in range(3):
        if not isinstance(value, str) or value[:1] not in "{[":
            break
        try:
            value = json.loads(value)
        except ValueError:
            break
        if isinstance(value, dict) and value.get("type") == "text":
            value = value.get("text")
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        text = "\n".join(str(block.get("text", "")) for block in value["content"])
        return text, bool(value.get("isError"))
    return (value if isinstance(value, str) else json.dumps(value)), False


def recorded_calls(run: Path) -> list[SampleCall]:
    """The run's tool calls in order, each with its recorded answer."""
    messages = json.loads((run / "messages.json").read_text(encoding="utf-8"))
    calls: dict[str, dict[str, Any]] = {}
    found: list[SampleCall] = []
    for item in messages:
        if item.get("type") == "function_call":
            calls[item["call_id"]] = item
        elif item.get("type") == "function_call_output":
            call = calls[item["call_id"]]
            text, flagged = _unwrap(item["output"])
            found.append(SampleCall(call["name"], json.loads(call["arguments"]), text, flagged))
    return found


def as_trajectory(run: Path, calls: list[SampleCall], task_id: str) -> Trajectory:
    """The run as a trajectory (error flags as the server meant them), naming its server."""
    server = run.parent.parent.name
    meta = json.loads((run / "meta.json").read_text(encoding="utf-8"))
    return Trajectory(
        id=f"{run.name}__{server}",
        task_id=task_id,
        agent="claude-sonnet-4.5",
        steps=[
            Step(
                index=number,
                action=ToolCallAction(
                    name=call.name, arguments=call.arguments, call_id=f"call_{number}"
                ),
                observation=Observation(text=call.text),
                is_error=call.failed,
            )
            for number, call in enumerate(calls, start=1)
        ],
        provenance=Provenance(
            source_format="mcpmark", source_path=str(run), details={"mcp": meta["mcp"]}
        ),
    )


def chinook_task(folder: Path, collation: str | None = None) -> tuple[Task, Path]:
    """A task starting from the sample's Chinook database under ``collation``, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    seed = folder / "seed.sql"
    if not seed.exists():
        shutil.copyfile(SAMPLE / "environments" / "chinook.sql", seed)
    task = Task(
        id="mcpmark-chinook",
        domain="ds",
        subdomain="postgres",
        instruction="Work on the Chinook database.",
        initial_state=SqlSeedState(collation=collation),
    )
    return task, folder

"""``--dry-run``: the exact requests a judge mode would send, written to a folder, no model.

Owns writing, for every trajectory of a dataset and every selected mode, the requests of
``judge_agent.loop.planned_requests``: ``<output>/<mode>/<trajectory>/request_<n>.json`` holds a
request's purpose and its messages with each image replaced by the name of a PNG/JPEG file written
next to it (``request_<n>_image_<k>.png``, the bytes the model would receive), and
``request_<n>.txt`` the same messages as plain text for reading. Requests that depend on the
model's earlier answers (A3's windows) are written with a placeholder where that answer goes.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dataset.store import load_dataset
from judge_agent.loop import JudgeSettings, planned_requests
from judge_agent.model import ChatMessage, ContentImage, ContentText
from judge_agent.modes import method_options_for
from storage.files import write_bytes_atomic, write_json_atomic, write_text_atomic

__all__ = ["DryRunSummary", "write_dry_run"]

_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


@dataclass
class DryRunSummary:
    """What a dry run wrote."""

    requests: int = 0
    images: int = 0
    folders: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _write_request(folder: Path, number: int, purpose: str, messages: list[ChatMessage]) -> int:
    images = 0
    plain: list[dict[str, object]] = []
    lines: list[str] = [f"# request {number}: {purpose}"]
    for message in messages:
        content = message.content if isinstance(message.content, list) else [message.content]
        parts: list[object] = []
        lines.append(f"\n## {message.role}")
        for part in content:
            if isinstance(part, str):
                parts.append(part)
                lines.append(part)
            elif isinstance(part, ContentText):
                parts.append(part.text)
                lines.append(part.text)
            elif isinstance(part, ContentImage):
                images += 1
                name = f"request_{number}_image_{images}{_EXTENSIONS.get(part.mime_type, '.bin')}"
                write_bytes_atomic(folder / name, base64.b64decode(part.data))
                parts.append({"image": name, "mime_type": part.mime_type})
                lines.append(f"[image {name}]")
            else:
                parts.append(part.model_dump(mode="json"))
        plain.append({"role": message.role, "content": parts})
    record = {"purpose": purpose, "messages": plain}
    write_json_atomic(folder / f"request_{number}.json", record)
    write_text_atomic(folder / f"request_{number}.txt", "\n".join(lines) + "\n")
    return images


def write_dry_run(
    dataset_root: Path,
    output: Path,
    *,
    modes: Sequence[str],
    method_options: dict[str, str],
    screenshots: str = "last",
    trajectories: Sequence[str] = (),
) -> DryRunSummary:
    """Write every selected mode's requests for the dataset's trajectories (all, or those named)."""
    dataset = load_dataset(dataset_root, partial=True)
    summary = DryRunSummary(problems=[str(p) for p in dataset.errors])
    chosen = sorted(trajectories or dataset.trajectories)
    for trajectory_id in chosen:
        trajectory = dataset.trajectories.get(trajectory_id)
        if trajectory is None:
            summary.problems.append(f"{trajectory_id}: no such trajectory in {dataset_root}")
            continue
        task = dataset.tasks[trajectory.task_id]
        for mode in modes:
            settings = JudgeSettings(
                mode=mode,
                screenshots=screenshots,
                method_options=method_options_for(mode, method_options),
            )
            folder = output / mode / trajectory_id
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob("request_*"):
                old.unlink()
            requests = planned_requests(
                task, trajectory, settings=settings, base_dir=dataset.trajectory_dir()
            )
            for number, planned in enumerate(requests, start=1):
                summary.images += _write_request(folder, number, planned.purpose, planned.messages)
                summary.requests += 1
            summary.folders.append(folder)
    return summary

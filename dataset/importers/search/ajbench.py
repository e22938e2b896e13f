"""AJ-Bench's search items (``src/data/Search/*.jsonl``/``.json``) into search trajectories.

AJ-Bench keeps each search answer split into single rows, one labelled record per row
(``deep_llm_judge_single_row.json``, ``wide_llm_judge_single_row.jsonl``), next to the original
answers (``deep_llm_judge_origin.jsonl``). The exact field names are not fixed here (the
repository cannot be reached from this machine), so each field is looked up under the names such
files use, in this order:

- task: ``task_id``, ``query_id``, ``id``, ``idx``; question: ``query``, ``question``,
  ``task_description``, ``instruction``, ``prompt``;
- the agent's answer: ``response``, ``answer``, ``final_answer``, ``model_response``;
  the agent: ``model``, ``model_name``, ``agent``;
- the single row: ``single_row``, ``row``, ``item``, ``claim``, ``single_item`` (a string, or an
  object rendered as ``key: value`` pairs);
- its label: ``label``, ``ground_truth``, ``gt``, ``gt_label``, ``human_label``, ``match``
  (1/0, true/false, PASS/FAIL); its sources: ``urls``, ``sources``, ``url``, ``source``, else
  the addresses written in the row.

Rows of one (task, agent, answer) become the claims of one trajectory, in file order; its label
is PASS when every row is. A record without a row is a whole answer (a trajectory without
claims). The subdomain comes from the file name (``deep``/``wide``); wide labels are marked as
an ``evaluator``'s (AJ-Bench labelled WideSearch rows by a majority of six models: automatic,
not human votes), deep ones as human.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dataset.importers.search.common import (
    ImportReport,
    first_of,
    label_value,
    read_records,
    safe_id,
    write_search_dataset,
)
from dataset.items import trajectory_label_from_items
from dataset.models import ClaimItem, EmptyState, Label, Provenance, Task, Trajectory
from dataset.urls import urls_in_text

__all__ = ["import_ajbench_search"]

_TASK = ("task_id", "query_id", "id", "idx")
_QUESTION = ("query", "question", "task_description", "instruction", "prompt")
_ANSWER = ("response", "answer", "final_answer", "model_response")
_AGENT = ("model", "model_name", "agent")
_ROW = ("single_row", "row", "item", "claim", "single_item")
_LABEL = ("label", "ground_truth", "gt", "gt_label", "human_label", "match")
_SOURCES = ("urls", "sources", "url", "source")


def _subdomain(path: Path) -> str:
    name = path.name.lower()
    return "wide" if "wide" in name else "deep"


def _row_text(row: object) -> str:
    if isinstance(row, Mapping):
        return "; ".join(f"{key}: {value}" for key, value in row.items())
    return str(row).strip()


def _sources(record: Mapping[str, Any], row_text: str) -> list[str]:
    raw = first_of(record, *_SOURCES)
    if isinstance(raw, str):
        return urls_in_text(raw) or [raw]
    if isinstance(raw, list):
        return [str(value) for value in raw]
    return urls_in_text(row_text)


class _Answer:
    """The rows of one agent's answer to one task, as they are read."""

    def __init__(self, task: Task, agent: str, answer: str | None, where: str) -> None:
        self.task = task
        self.agent = agent
        self.answer = answer
        self.where = where
        self.items: list[ClaimItem] = []
        self.whole_label: str | None = None


def import_ajbench_search(sources: Sequence[Path], destination: Path) -> ImportReport:
    """Import AJ-Bench search item files into the dataset at ``destination`` (with
    ``urls.txt``); records that cannot be read are reported with file, line and field."""
    report = ImportReport()
    answers: dict[tuple[str, str, str], _Answer] = {}
    for path in sources:
        subdomain = _subdomain(path)
        for where, record in read_records(path, report):
            question = first_of(record, *_QUESTION)
            if not isinstance(question, str) or not question.strip():
                report.problem(where, "no question (looked for " + ", ".join(_QUESTION) + ")")
                continue
            raw_task = first_of(record, *_TASK)
            digest = hashlib.sha256(question.encode()).hexdigest()[:12]
            task_id = safe_id(f"{subdomain}-{raw_task if raw_task is not None else digest}")
            answer = first_of(record, *_ANSWER)
            answer_text = answer if isinstance(answer, str) else None
            agent = str(first_of(record, *_AGENT) or "unknown-agent")
            raw_label = first_of(record, *_LABEL)
            label = label_value(raw_label)
            if raw_label is not None and label is None:
                report.problem(where, f"{raw_label!r} is not 1/0, true/false or PASS/FAIL", "label")
                continue
            key = (task_id, agent, hashlib.sha256((answer_text or "").encode()).hexdigest())
            if key not in answers:
                task = Task(
                    id=task_id,
                    domain="search",
                    subdomain=subdomain,
                    instruction=question.strip(),
                    initial_state=EmptyState(),
                    metadata={"live_web": True, "source": "aj-bench"},
                )
                answers[key] = _Answer(task, agent, answer_text, where)
            entry = answers[key]
            row = first_of(record, *_ROW)
            if row is None:
                entry.whole_label = label
                continue
            text = _row_text(row)
            if not text:
                report.problem(where, "the single row is empty", "single_row")
                continue
            entry.items.append(
                ClaimItem(
                    id=f"r{len(entry.items) + 1}",
                    text=text,
                    label=label,
                    sources=_sources(record, text),
                )
            )
    for (task_id, agent, digest), entry in answers.items():
        overall = trajectory_label_from_items(entry.items) if entry.items else entry.whole_label
        trajectory = Trajectory(
            id=safe_id(f"{task_id}--{safe_id(agent, 40)}-{digest[:8]}"),
            task_id=task_id,
            agent=agent,
            model=agent if agent != "unknown-agent" else None,
            final_response=entry.answer
            or ("\n".join(item.text for item in entry.items) if entry.items else None),
            label=(
                Label(
                    value="PASS" if overall == "PASS" else "FAIL",
                    source="evaluator" if entry.task.subdomain == "wide" else "human",
                )
                if overall is not None
                else None
            ),
            items=entry.items,
            stop_reason="completed",
            provenance=Provenance(
                source_format="ajbench-search",
                source_path=entry.where,
                details={"answer_given": entry.answer is not None},
            ),
        )
        report.tasks.setdefault(task_id, entry.task)
        report.trajectories[trajectory.id] = trajectory
    write_search_dataset(
        destination,
        report,
        name=destination.name,
        description="AJ-Bench search items (single rows with labels), imported from its files.",
        generator="agentjudge datasets import-ajbench-search",
    )
    return report

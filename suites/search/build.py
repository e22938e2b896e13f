"""Building the search suite: one archive shared by every task, the scripted runs recorded
through the browser MCP server on real Chromium, each claim labelled against the world.

A claim is labelled PASS when every value it asserts equals the world's (``world.fact``) and
every value written on pages appears on a page it cites, which must be in the archive; otherwise
FAIL, with the reason kept in the trajectory's metadata. A trajectory is PASS when all its claims
are. The policies' intentions are checked against these labels, never used as labels. The output
is the same bytes on every build: the archive is rendered from code, times are synthetic, and
the browser's snapshots are deterministic.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mcp import Client

from dataset.assets import ASSETS_DIR, DATASET_PREFIX
from dataset.models import ClaimItem, Label, LabelValue, PageArchiveState, Task, Trajectory
from dataset.store import Manifest, load_dataset, write_manifest, write_task, write_trajectory
from mcp_servers.browser.server import browser_server
from sandboxes.browser.sandbox import BrowserProvider
from suites.search.browsing import BrowsingSession, run_start
from suites.search.site import site_pages, write_archive
from suites.search.spec import Claim, SearchPolicy, SearchTask
from suites.search.tasks import SITES_NOTE
from suites.search.world import fact

__all__ = [
    "ARCHIVE_DIR",
    "SUITE_NAME",
    "BuildError",
    "BuildReport",
    "build_suite",
    "label_claim",
    "page_texts",
]

SUITE_NAME = "search-suite"
ARCHIVE_DIR = f"{ASSETS_DIR}/search-archive"
"""The page archive every task starts from, relative to the dataset's root."""


class BuildError(Exception):
    """The suite could not be built as written; the message names the task or run."""


@dataclass
class BuildReport:
    """What a build made."""

    trajectories: list[Trajectory] = field(default_factory=list)
    pages: int = 0
    problems: list[str] = field(default_factory=list)


def page_texts() -> dict[str, str]:
    """Every archived page's visible text (tags dropped, entities decoded), by URL."""
    texts = {}
    for url, page in site_pages().items():
        body = page.split("<body>", 1)[-1]
        texts[url] = html.unescape(re.sub(r"<[^>]+>", " ", body))
    return texts


def label_claim(claim: Claim, texts: dict[str, str]) -> tuple[LabelValue, str]:
    """The claim's label and why, against the world and the archived pages."""
    for source in claim.sources:
        if source not in texts:
            return "FAIL", f"cites {source}, which is not a captured page"
    for item in claim.facts:
        try:
            truth = fact(item.kind, item.name, item.attribute)
        except KeyError:
            return "FAIL", f"there is no {item.kind} {item.name!r}"
        if item.claimed != truth:
            return (
                "FAIL",
                f"{item.kind} {item.name} {item.attribute} is {truth}, not {item.claimed}",
            )
        if item.shown and not any(item.claimed in texts[source] for source in claim.sources):
            return "FAIL", f"no cited page states {item.claimed!r}"
    return "PASS", "every value matches the ground truth and a cited page states it"


def final_response(task: SearchTask, claims: list[Claim]) -> str:
    """The agent's answer as it would write it: sentences (deep) or a table (wide), with sources."""
    if task.subdomain == "deep":
        return " ".join(f"{claim.text} [{', '.join(claim.sources)}]" for claim in claims)
    header = [*task.columns, "Source"]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + " --- |" * len(header),
        *(f"| {' | '.join((*claim.cells, ', '.join(claim.sources)))} |" for claim in claims),
    ]
    return "Here is what I found:\n\n" + "\n".join(lines)


def suite_task_record(task: SearchTask) -> Task:
    """The dataset record of a suite task."""
    return Task(
        id=task.id,
        domain="search",
        subdomain=task.subdomain,
        instruction=f"{task.question} {SITES_NOTE}",
        initial_state=PageArchiveState(path=f"{DATASET_PREFIX}{ARCHIVE_DIR}"),
        metadata={"suite": SUITE_NAME, "live_web": False},
    )


async def record_run(
    task: SearchTask,
    policy: SearchPolicy,
    provider: BrowserProvider,
    archive_folder: Path,
    sequence: int,
    texts: dict[str, str],
) -> Trajectory:
    """Run one policy in a fresh browser over the archive; return its labelled trajectory."""
    archive = await provider.archive(archive_folder)
    sandbox = await provider.open(archive)
    started = run_start(sequence)
    async with sandbox, Client(browser_server(sandbox.session).server()) as client:
        session = BrowsingSession(client, started)
        claims = await policy.run(session)
    items = []
    checks: dict[str, str] = {}
    for number, claim in enumerate(claims, start=1):
        label, reason = label_claim(claim, texts)
        item_id = f"c{number}"
        checks[item_id] = reason
        items.append(
            ClaimItem(id=item_id, text=claim.text, label=label, sources=list(claim.sources))
        )
    passed = all(item.label == "PASS" for item in items)
    trajectory_id = f"{task.id}--{policy.name}"
    if not items:
        raise BuildError(f"{trajectory_id}: the policy made no claim")
    if ("PASS" if passed else "FAIL") != policy.intent:
        raise BuildError(
            f"{trajectory_id}: written to {policy.intent} ({policy.note}) but labelled "
            f"{'PASS' if passed else 'FAIL'}: {checks}"
        )
    return Trajectory(
        id=trajectory_id,
        task_id=task.id,
        agent=policy.agent,
        steps=session.steps,
        final_response=final_response(task, claims),
        label=Label(value="PASS" if passed else "FAIL", source="ground-truth"),
        items=items,
        stop_reason="completed",
        turn_count=len(session.steps) + 1,
        started_at=started,
        ended_at=session.ended_at,
        metadata={
            "scripted_policy": policy.name,
            "intended": policy.intent,
            "flaws": list(policy.flaws),
            "note": policy.note,
            "item_checks": checks,
        },
    )


async def build_suite(output: Path, tasks: list[SearchTask], *, description: str) -> BuildReport:
    """Write the whole suite to ``output`` (replacing it) and return what was made."""
    if output.exists():
        shutil.rmtree(output)
    write_manifest(
        output,
        Manifest(name=SUITE_NAME, description=description, generator="python -m suites.search"),
    )
    report = BuildReport()
    texts = page_texts()
    sequence = 0
    report.pages = write_archive(output / ARCHIVE_DIR)
    async with BrowserProvider() as provider:
        for task in tasks:
            write_task(output, suite_task_record(task))
            for policy in task.policies:
                try:
                    trajectory = await record_run(
                        task, policy, provider, output / ARCHIVE_DIR, sequence, texts
                    )
                except Exception as error:
                    report.problems.append(
                        f"{task.id}--{policy.name}: {type(error).__name__}: {error}"
                    )
                    continue
                finally:
                    sequence += 1
                write_trajectory(output, trajectory)
                report.trajectories.append(trajectory)
    loaded = load_dataset(output, partial=True)
    report.problems.extend(
        str(problem) for problem in loaded.problems if problem.severity == "error"
    )
    (output / "README.md").write_text(readme_text(tasks, report.trajectories, report.pages))
    return report


def readme_text(tasks: list[SearchTask], trajectories: Iterable[Trajectory], pages: int) -> str:
    """The suite's README: how it is made, and one row per task."""
    rows = []
    by_task: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        by_task.setdefault(trajectory.task_id, []).append(trajectory)
    totals = [0, 0, 0]
    for task in tasks:
        runs = by_task.get(task.id, [])
        items = [item for run in runs for item in run.items]
        wrong = sum(item.label == "FAIL" for item in items)
        totals[0] += len(runs)
        totals[1] += len(items)
        totals[2] += wrong
        flaws = sorted({flaw for policy in task.policies for flaw in policy.flaws})
        rows.append(
            f"| `{task.id}` | {task.subdomain} | {len(runs)} | {len(items)} | {wrong} | "
            f"{', '.join(flaws)} |"
        )
    rows.append(f"| **all** | | {totals[0]} | {totals[1]} | {totals[2]} | |")
    return (
        "# Search judging suite\n\n"
        "Built by `python -m suites.search --output datasets/search` (see `suites/search/`). "
        f"Every task starts from the same page archive (`{ARCHIVE_DIR}/`, {pages} pages of "
        "three invented sites: an encyclopedia, a shop and a news site), rendered from "
        "`suites/search/world.py`. Every run is a scripted agent browsing that archive "
        "through the browser MCP server on headless Chromium; every claim is labelled "
        "against the world (its values, and a cited page stating them), a run is PASS when "
        "all its claims are. Do not edit by hand: change the code and rebuild.\n\n"
        "| task | subdomain | runs | claims | wrong claims | flaws of the wrong runs |\n"
        "| --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n"
    )

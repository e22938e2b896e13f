"""fs-archive-old (restructuring): the daily logs dated before a cut-off moved from logs/ to a
new top-level archive/.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import files_under, main
from suites.ds.tasks.filesystem.common import dir_names, file_names, make_task, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-archive-old"

CUTOFF = "2024-03-01"


def _logs() -> dict[str, str]:
    generator = random.Random(6303)
    days = {date(2024, 2, 29), date(2024, 3, 1)}
    while len(days) < 22:
        days.add(date(2024, 1, 8) + timedelta(days=generator.randint(0, 100)))
    files: dict[str, str] = {}
    for day in sorted(days):
        lines = [
            f"{day.isoformat()}T{generator.randint(0, 23):02d}:{generator.randint(0, 59):02d}:00Z "
            f"{generator.choice(['INFO', 'INFO', 'WARN', 'ERROR'])} "
            f"{generator.choice(['request served', 'cache miss', 'retrying upstream', 'job done'])}"
            for _ in range(generator.randint(3, 9))
        ]
        files[f"logs/app-{day.isoformat()}.log"] = "\n".join(lines) + "\n"
    files["logs/current.log"] = "2024-04-20T10:00:00Z INFO service started\n"
    files["logs/README.txt"] = "Daily logs of the app service, one file per day.\n"
    return files


LOGS = _logs()


def _is_old(name: str) -> bool:
    match = re.match(r"^app-(\d{4}-\d{2}-\d{2})\.log$", name)
    return match is not None and match[1] < CUTOFF


ARCHIVED = {f"archive/{Path(p).name}": t for p, t in LOGS.items() if _is_old(Path(p).name)}
KEPT = {p: t for p, t in LOGS.items() if not _is_old(Path(p).name)}


def check(root: Path) -> bool:
    """Checks that every logs/app-YYYY-MM-DD.log dated before 2024-03-01 is in archive/ (at the
    top) with its content, that every other file is still in logs/ unchanged, and that neither
    folder holds anything else."""
    ok = True
    found_archive = files_under(root, "archive")
    found_logs = files_under(root, "logs")
    for name, text in sorted(ARCHIVED.items()):
        ok &= report(found_archive.get(name) == text, name + " archived, unchanged")
    for name, text in sorted(KEPT.items()):
        ok &= report(found_logs.get(name) == text, name + " still in logs/, unchanged")
    extra = sorted(set(found_archive) - set(ARCHIVED)) + sorted(set(found_logs) - set(KEPT))
    ok &= report(not extra, "no other files in archive/ or logs/ " + str(extra[:5]))
    return ok


async def archive_planner(session: AgentSession) -> str:
    """Reads the README, creates archive/, moves the old logs, verifies both folders."""
    await session.call("list_allowed_directories")
    listing = await session.call("list_directory", path=f"{session.root}/logs")
    await session.call("read_text_file", path=f"{session.root}/logs/README.txt")
    old = sorted(name for name in file_names(listing.text) if _is_old(name))
    session.think(f"{len(old)} logs are dated before {CUTOFF}; 2024-03-01 itself stays.")
    await session.call("create_directory", path=f"{session.root}/archive")
    for name in old:
        await session.call(
            "move_file",
            source=f"{session.root}/logs/{name}",
            destination=f"{session.root}/archive/{name}",
        )
    await session.call("list_directory", path=f"{session.root}/archive")
    await session.call("list_directory", path=f"{session.root}/logs")
    return f"Done: the {len(old)} logs from before {CUTOFF} are in archive/; newer ones stay."


async def archive_boundary(session: AgentSession) -> str:
    """Archives up to and including 1 March by mistake, notices and moves that one back."""
    listing = await session.call("list_directory", path="logs")
    await session.call("read_text_file", path="logs/app-2024-03-01.log", head=2)
    await session.call("create_directory", path="archive")
    picked = [
        n
        for n in sorted(file_names(listing.text))
        if n.startswith("app-") and n <= "app-2024-03-01.log"
    ]
    for name in picked:
        await session.call("move_file", source=f"logs/{name}", destination=f"archive/{name}")
    moved = await session.call("list_directory", path="archive")
    if "app-2024-03-01.log" in file_names(moved.text):
        session.think("The cut-off is *before* 2024-03-01: the 1 March log must go back.")
        await session.call(
            "move_file", source="archive/app-2024-03-01.log", destination="logs/app-2024-03-01.log"
        )
    await session.call("search_files", path="logs", pattern="app-2024-0[12]-*.log")
    return (
        "Archived the January and February logs. I briefly moved the 1 March log as well and "
        "put it back; please check the archive."
    )


async def archive_nested(session: AgentSession) -> str:
    """Moves the right logs, but into logs/archive/."""
    listing = await session.call("list_directory", path=f"{session.root}/logs")
    old = sorted(name for name in file_names(listing.text) if _is_old(name))
    await session.call("create_directory", path=f"{session.root}/logs/archive")
    for name in old:
        await session.call(
            "move_file",
            source=f"{session.root}/logs/{name}",
            destination=f"{session.root}/logs/archive/{name}",
        )
    return (
        f"Moved the {len(old)} old logs to logs/archive/; I was not sure whether archive/ "
        "should sit at the top instead."
    )


async def archive_regroup(session: AgentSession) -> str:
    """Archives correctly, checks, then moves archive/ under logs/ 'to keep things together'."""
    await session.call("directory_tree", path=session.root)
    listing = await session.call("list_directory", path="logs")
    old = sorted(name for name in file_names(listing.text) if _is_old(name))
    await session.call("create_directory", path="archive")
    for name in old:
        await session.call("move_file", source=f"logs/{name}", destination=f"archive/{name}")
    top = await session.call("list_directory", path=session.root)
    session.think(f"Top level now has {dir_names(top.text)}; the archive belongs with the logs.")
    await session.call("move_file", source="archive", destination="logs/archive")
    await session.call("list_directory", path="logs")
    return (
        f"Archived {len(old)} old logs and moved the archive under logs/ to keep things together."
    )


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        f"""Archive the old logs. Move every file logs/app-YYYY-MM-DD.log whose date is before
        {CUTOFF} (strictly) into a folder archive/ at the top of the sandbox (create it), keeping
        the file names. Logs dated {CUTOFF} or later and every other file stay in logs/. Do not
        change the content of any file and do not put anything else in archive/.""",
    ),
    kind="restructuring",
    build_initial=lambda folder: write_tree(folder, LOGS),
    verifier=verify_script(TASK_ID, check, main),
    checks="logs dated before 2024-03-01 in archive/, the rest in logs/, contents unchanged",
    policies=[
        AgentPolicy("planner", "planner", archive_planner, "PASS", note="direct and checked"),
        AgentPolicy("boundary", "explorer", archive_boundary, "PASS", note="fixes off-by-one"),
        AgentPolicy("nested", "one-shot", archive_nested, "FAIL", "wrong-target", "logs/archive/"),
        AgentPolicy("regroup", "overreacher", archive_regroup, "FAIL", "undone", "moves archive"),
    ],
)

"""fs-newest-report (metadata): the newest report of every region by the DD-MM-YYYY date in
its name (not the name's alphabetical order) and the region's report count, in latest.csv.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import answer_lines, main
from suites.ds.tasks.filesystem.common import (
    dir_names,
    file_names,
    found_paths,
    make_task,
    write_tree,
)
from suites.ds.verify_script import verify_script

TASK_ID = "fs-newest-report"

_REGIONS = ["north", "south", "east", "west", "central"]
_REPORT = re.compile(r"^([a-z]+)-report-(\d{2})-(\d{2})-(\d{4})\.txt$")


def _reports() -> dict[str, str]:
    generator = random.Random(7303)
    files: dict[str, str] = {}
    for region in _REGIONS:
        days: set[date] = set()
        while len(days) < generator.randint(4, 8):
            days.add(date(2022, 1, 1) + timedelta(days=generator.randint(0, 1000)))
        for day in sorted(days):
            name = f"{region}-report-{day:%d-%m-%Y}.txt"
            files[f"reports/{region}/{name}"] = (
                f"Region: {region}\nPeriod ending: {day.isoformat()}\n"
                f"Revenue: {generator.randint(10_000, 90_000)}\n"
            )
        files[f"reports/{region}/notes.md"] = f"Notes for {region}: reports are named by day.\n"
    return files


REPORTS = _reports()


def _report_day(name: str) -> date | None:
    match = _REPORT.match(name)
    if match is None:
        return None
    return date(int(match[4]), int(match[3]), int(match[2]))


def _latest_rows(names: list[str], lexical: bool = False) -> list[str]:
    """Rows region,newest,count from report paths (any prefix)."""
    by_region: dict[str, list[str]] = {}
    for path in names:
        name = path.rsplit("/", 1)[-1]
        match = _REPORT.match(name)
        if match is not None:
            by_region.setdefault(match[1], []).append(name)
    rows = []
    for region, reports in sorted(by_region.items()):
        newest = max(reports) if lexical else max(reports, key=lambda n: _report_day(n) or date.min)
        rows.append(f"{region},{newest},{len(reports)}")
    return rows


def _latest(names: list[str], lexical: bool = False) -> str:
    return "region,newest,count\n" + "\n".join(_latest_rows(names, lexical)) + "\n"


EXPECTED = _latest_rows(list(REPORTS))
assert _latest_rows(list(REPORTS), lexical=True) != EXPECTED, "name order must mislead"


def check(root: Path) -> bool:
    """Checks that latest.csv has the header region,newest,count and, per region sorted by
    name, the report with the latest DD-MM-YYYY date and the report count; reports intact."""
    return answer_lines(root, REPORTS, "latest.csv", "region,newest,count", EXPECTED)


async def newest_explorer(session: AgentSession) -> str:
    """Looks at folders and a report, works out the date format, writes and checks."""
    await session.call("list_allowed_directories")
    top = await session.call("list_directory", path=f"{session.root}/reports")
    names: list[str] = []
    for region in dir_names(top.text):
        listing = await session.call("list_directory", path=f"{session.root}/reports/{region}")
        names += file_names(listing.text)
    sample = next(name for name in names if _REPORT.match(name))
    region = sample.split("-", 1)[0]
    body = await session.call("read_text_file", path=f"{session.root}/reports/{region}/{sample}")
    await session.call("get_file_info", path=f"{session.root}/reports/{region}/{sample}")
    session.think(
        f"{sample} says '{body.text.splitlines()[1]}': names are day-month-year, so sorting names "
        "as text would be wrong. Compare real dates. File times are all the same, useless."
    )
    await session.call("write_file", path=f"{session.root}/latest.csv", content=_latest(names))
    await session.call("read_text_file", path=f"{session.root}/latest.csv")
    return (
        "latest.csv now has, for each region, its newest report by the date in the name and "
        "the count."
    )


async def newest_direct(session: AgentSession) -> str:
    """A single search, then the answer."""
    found = await session.call("search_files", path="reports", pattern="**/*-report-*.txt")
    await session.call("write_file", path="latest.csv", content=_latest(found_paths(found.text)))
    return "Done: latest.csv written (dates in the names read as day-month-year)."


async def newest_lexical(session: AgentSession) -> str:
    """Looks at every region but takes the alphabetically last name as the newest."""
    names: list[str] = []
    for region in _REGIONS:
        listing = await session.call("list_directory", path=f"{session.root}/reports/{region}")
        names += file_names(listing.text)
    await session.call("read_text_file", path=f"{session.root}/reports/north/notes.md")
    session.think("The last name in sorted order is the newest report of a region.")
    await session.call(
        "write_file", path=f"{session.root}/latest.csv", content=_latest(names, lexical=True)
    )
    await session.call("read_text_file", path=f"{session.root}/latest.csv")
    return "latest.csv is written with the newest report and the report count of each region."


async def newest_edit_fails(session: AgentSession) -> str:
    """Writes a first part, tries to append with an edit that does not match, stops."""
    found = await session.call("search_files", path=f"{session.root}/reports", pattern="**/*.txt")
    rows = _latest_rows(found_paths(found.text))
    target = f"{session.root}/latest.csv"
    await session.call(
        "write_file", path=target, content="region,newest,count\n" + "\n".join(rows[:3]) + "\n"
    )
    session.think("Append the remaining regions after the last row.")
    await session.call(
        "edit_file",
        path=target,
        edits=[{"oldText": rows[2] + "\n\n", "newText": "\n".join(rows[2:]) + "\n"}],
    )
    return (
        "latest.csv has the first three regions; adding the other two failed with an edit "
        "error, so the file is incomplete."
    )


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Each folder reports/<region>/ holds reports named <region>-report-DD-MM-YYYY.txt
        (day, month, year) and possibly other files. Write latest.csv at the top of the sandbox
        with the header region,newest,count and one row per region, sorted by region name: the
        file name of the region's newest report by the date in its name, and the number of
        report files in the folder (other files do not count). Do not modify anything under
        reports/.""",
    ),
    kind="metadata",
    build_initial=lambda folder: write_tree(folder, REPORTS),
    verifier=verify_script(TASK_ID, check, main),
    checks="latest.csv: newest report by name date (DD-MM-YYYY) and count per region, sorted",
    policies=[
        AgentPolicy("explorer", "explorer", newest_explorer, "PASS", note="checks date format"),
        AgentPolicy("direct", "one-shot", newest_direct, "PASS", note="two calls"),
        AgentPolicy(
            "lexical", "hasty", newest_lexical, "FAIL", "wrong-target", "alphabetical newest"
        ),
        AgentPolicy(
            "edit-fails", "skeptic", newest_edit_fails, "FAIL", "stops-after-error", "edit error"
        ),
    ],
)

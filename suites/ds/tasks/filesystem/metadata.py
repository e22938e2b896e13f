"""Metadata tasks: the largest files of a tree with exact sizes, lines of code per extension,
the newest report per region by the date in its name."""

from __future__ import annotations

import json
import random
import re
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.common import (
    dir_names,
    file_names,
    found_paths,
    make_task,
    split_multiple,
    verifier,
    write_tree,
)

_ANSWER_CHECKS = """
ok &= unchanged(root, SOURCES, "the source files")
text = read(root / TARGET)
if not report(text is not None, TARGET + " exists"):
    return False
lines = [line for line in text.splitlines() if line.strip()]
if HEADER is not None:
    ok &= report(bool(lines) and lines[0] == HEADER, "header " + HEADER)
    lines = lines[1:]
for position, want in enumerate(EXPECTED, start=1):
    ok &= report(want in lines, "line " + want)
count = "%d lines (found %d)" % (len(EXPECTED), len(lines))
ok &= report(len(lines) == len(EXPECTED), count)
ok &= report(lines == EXPECTED, "lines in the required order")
"""


def _answer_verifier(
    task_id: str,
    summary: str,
    sources: dict[str, str],
    target: str,
    header: str | None,
    expected: list[str],
) -> str:
    return verifier(
        task_id,
        summary,
        _ANSWER_CHECKS,
        SOURCES=sources,
        TARGET=target,
        HEADER=header,
        EXPECTED=expected,
    )


# ---------------------------------------------------------------------------------------------
# fs-largest-files: the 3 largest files under data/ with exact sizes -> answer.txt
# ---------------------------------------------------------------------------------------------


def _csv_text(generator: random.Random, size: int) -> str:
    rows = ["id,timestamp,sensor,value"]
    length = len(rows[0]) + 1
    number = 0
    while length < size:
        number += 1
        row = (
            f"{number},2024-0{generator.randint(1, 9)}-{generator.randint(10, 28)}T"
            f"{generator.randint(10, 23)}:00:00,s{generator.randint(1, 40)},"
            f"{generator.randint(0, 99999) / 100}"
        )
        rows.append(row)
        length += len(row) + 1
    return "\n".join(rows) + "\n"


def _data() -> dict[str, str]:
    generator = random.Random(7101)
    files: dict[str, str] = {}
    folders = {
        "raw/2023": 7,
        "raw/2024": 7,
        "processed": 5,
        "exports": 4,
        "tmp": 3,
    }
    for folder, count in folders.items():
        for index in range(count):
            size = generator.randint(400, 70_000)
            files[f"data/{folder}/batch-{index + 1:02d}.csv"] = _csv_text(generator, size)
    files["data/raw/2024/batch-05.csv"] = _csv_text(generator, 118_300)
    files["data/exports/full-export.csv"] = _csv_text(generator, 97_100)
    files["data/processed/batch-03.csv"] = _csv_text(generator, 96_700)
    files["data/README.md"] = "# Sensor data\n\nraw/ as received, processed/ cleaned.\n"
    files["data/index.csv"] = _csv_text(generator, 74_000)
    return files


DATA = _data()


def _largest(files: dict[str, str], count: int = 3) -> list[str]:
    sizes = sorted(((len(t.encode()), p) for p in files for t in [files[p]]), reverse=True)
    return [f"{path.removeprefix('data/')} {size}" for size, path in sizes[:count]]


_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2}


def _sized_entries(listing: str) -> list[tuple[str, float, str]]:
    """(name, approximate bytes, size as shown) of the files of a sized listing."""
    entries = []
    for line in listing.splitlines():
        if not line.startswith("[FILE] "):
            continue
        name, number, unit = line[7:].rsplit(maxsplit=2)
        entries.append((name, float(number) * _UNITS[unit], f"{number} {unit}"))
    return entries


def _tree_folders(tree_json: str) -> list[str]:
    """Every directory of a ``directory_tree`` answer, relative to its root."""
    folders: list[str] = []

    def walk(nodes: list[dict[str, object]], prefix: str) -> None:
        for node in nodes:
            if node.get("type") == "directory":
                folders.append(prefix + str(node["name"]))
                children = node.get("children")
                if isinstance(children, list):
                    walk(children, prefix + str(node["name"]) + "/")

    walk(json.loads(tree_json), "")
    return folders


async def largest_explorer(session: AgentSession) -> str:
    """Sized listings of every folder, exact sizes of the top candidates, checks the answer."""
    await session.call("list_allowed_directories")
    tree = await session.call("directory_tree", path=f"{session.root}/data")
    candidates: list[tuple[float, str]] = []
    for folder in ["", *_tree_folders(tree.text)]:
        where = f"{session.root}/data/{folder}".rstrip("/")
        listing = await session.call("list_directory_with_sizes", path=where, sortBy="size")
        for name, approximate, _ in _sized_entries(listing.text):
            candidates.append((approximate, f"{folder}/{name}".lstrip("/")))
    session.think("Listed sizes are rounded; get exact byte sizes for the top five.")
    exact: list[tuple[int, str]] = []
    for _, path in sorted(candidates, reverse=True)[:5]:
        info = await session.call("get_file_info", path=f"{session.root}/data/{path}")
        exact.append((int(info.text.splitlines()[0].removeprefix("size: ")), path))
    lines = [f"{path} {size}" for size, path in sorted(exact, reverse=True)[:3]]
    await session.call(
        "write_file", path=f"{session.root}/answer.txt", content="\n".join(lines) + "\n"
    )
    await session.call("read_text_file", path=f"{session.root}/answer.txt")
    return "answer.txt now lists the three largest files under data/ with exact byte sizes."


async def largest_direct(session: AgentSession) -> str:
    """Uses the tree and sized listings, exact sizes for three only; hedges at the end."""
    tree = await session.call("directory_tree", path="data")
    candidates: list[tuple[float, str]] = []
    for folder in ["", *_tree_folders(tree.text)]:
        listing = await session.call(
            "list_directory_with_sizes", path=f"data/{folder}".rstrip("/"), sortBy="size"
        )
        candidates += [(a, f"{folder}/{n}".lstrip("/")) for n, a, _ in _sized_entries(listing.text)]
    top = sorted(candidates, reverse=True)[:3]
    lines = []
    for _, path in top:
        info = await session.call("get_file_info", path=f"data/{path}")
        lines.append(f"{path} {info.text.splitlines()[0].removeprefix('size: ')}")
    await session.call("write_file", path="answer.txt", content="\n".join(lines) + "\n")
    return (
        "answer.txt has the three largest files. The second and third are close in size and I "
        "only fetched exact sizes for those three, so it might be worth a second look."
    )


async def largest_rounded(session: AgentSession) -> str:
    """Finds the right files but writes the rounded sizes of the listings."""
    tree = await session.call("directory_tree", path=f"{session.root}/data")
    shown: list[tuple[float, str, str]] = []
    for folder in ["", *_tree_folders(tree.text)]:
        where = f"{session.root}/data/{folder}".rstrip("/")
        listing = await session.call("list_directory_with_sizes", path=where, sortBy="size")
        for name, approximate, text in _sized_entries(listing.text):
            shown.append((approximate, f"{folder}/{name}".lstrip("/"), text))
    top = sorted(shown, reverse=True)[:3]
    lines = [f"{path} {text}" for _, path, text in top]
    await session.call(
        "write_file", path=f"{session.root}/answer.txt", content="\n".join(lines) + "\n"
    )
    return "answer.txt has the three biggest files with their sizes as the listing shows them."


async def largest_claims(session: AgentSession) -> str:
    """Investigates thoroughly, then reports an answer file it never wrote."""
    await session.call("list_directory", path=session.root)
    tree = await session.call("directory_tree", path=f"{session.root}/data")
    found = []
    for folder in _tree_folders(tree.text):
        listing = await session.call(
            "list_directory_with_sizes", path=f"{session.root}/data/{folder}", sortBy="size"
        )
        found += [(a, f"{folder}/{n}") for n, a, _ in _sized_entries(listing.text)[:1]]
    best = sorted(found, reverse=True)[:3]
    sizes = []
    for _, path in best:
        info = await session.call("get_file_info", path=f"{session.root}/data/{path}")
        sizes.append(f"{path} ({info.text.splitlines()[0]})")
    session.think("Those are the three largest; report them.")
    return "I wrote answer.txt with the three largest files: " + "; ".join(sizes) + "."


LARGEST_TASK = SuiteTask(
    task=make_task(
        "fs-largest-files",
        """Find the three largest files anywhere under data/ (subfolders included). Write
        answer.txt at the top of the sandbox with exactly three lines, largest first, each of the
        form `<path relative to data/> <size in bytes>`, e.g. `raw/2023/batch-01.csv 51234`: the
        exact size as a whole number of bytes, not a rounded or human-readable size. Do not
        modify anything under data/.""",
    ),
    kind="metadata",
    build_initial=lambda folder: write_tree(folder, DATA),
    verifier=_answer_verifier(
        "fs-largest-files",
        "Checks that answer.txt has exactly the three largest files under data/ as "
        "`<relative path> <exact bytes>`, largest first, and that data/ is unchanged.",
        DATA,
        "answer.txt",
        None,
        _largest(DATA),
    ),
    checks="answer.txt: 3 largest files under data/, exact byte sizes, largest first; data intact",
    policies=[
        AgentPolicy("explorer", "explorer", largest_explorer, "PASS", note="exact sizes for 5"),
        AgentPolicy("direct", "one-shot", largest_direct, "PASS", note="hedged final message"),
        AgentPolicy("rounded", "hasty", largest_rounded, "FAIL", "constraint", "KB sizes"),
        AgentPolicy("claims", "skeptic", largest_claims, "FAIL", "false-claim", "never writes"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-loc-by-ext: files and lines per extension under project/ (without node_modules) -> loc.csv
# ---------------------------------------------------------------------------------------------

_LINE_TEMPLATES = {
    "py": ["import os", "def handler(event):", "    return event.get('id')", "VALUE = {n}", ""],
    "js": ["const value = {n};", "export function run() {{", "  return value;", "}}", ""],
    "css": [".card-{n} {{", "  margin: {n}px;", "}}"],
    "html": ['<div class="row">', "  <span>{n}</span>", "</div>"],
    "md": ["## Section {n}", "", "Some notes about step {n}."],
    "json": ['  "key{n}": {n},'],
}


def _lines(generator: random.Random, extension: str, count: int) -> str:
    templates = _LINE_TEMPLATES[extension]
    return "".join(
        generator.choice(templates).format(n=generator.randint(1, 99)) + "\n" for _ in range(count)
    )


def _project() -> dict[str, str]:
    generator = random.Random(7207)
    layout = {
        "src": [("py", 9)],
        "web": [("js", 6), ("css", 3), ("html", 4)],
        "docs": [("md", 4)],
        "node_modules/leftpad": [("js", 3)],
    }
    files: dict[str, str] = {}
    for folder, kinds in layout.items():
        for extension, count in kinds:
            for index in range(count):
                lines = generator.randint(15, 140)
                files[f"project/{folder}/file{index + 1:02d}.{extension}"] = _lines(
                    generator, extension, lines
                )
    files["project/package.json"] = '{\n  "name": "shop-web",\n  "private": true\n}\n'
    files["project/node_modules/leftpad/package.json"] = '{\n  "name": "leftpad"\n}\n'
    return files


PROJECT = _project()


def _loc_rows(files: dict[str, str], skip_vendor: bool = True) -> list[str]:
    totals: dict[str, list[int]] = {}
    for path, text in files.items():
        if skip_vendor and "/node_modules/" in path:
            continue
        extension = path.rsplit(".", 1)[1]
        entry = totals.setdefault(extension, [0, 0])
        entry[0] += 1
        entry[1] += text.count("\n")
    ordered = sorted(totals.items(), key=lambda item: -item[1][1])
    return [f"{ext},{files_},{lines}" for ext, (files_, lines) in ordered]


def _loc(files: dict[str, str], skip_vendor: bool = True) -> str:
    return "extension,files,lines\n" + "\n".join(_loc_rows(files, skip_vendor)) + "\n"


async def loc_planner(session: AgentSession) -> str:
    """One search and one read per extension, without node_modules; checks the result."""
    session.think("Map the project first, then go extension by extension, node_modules excluded.")
    await session.call("directory_tree", path=f"{session.root}/project")
    files: dict[str, str] = {}
    for extension in ["py", "js", "css", "html", "md", "json"]:
        found = await session.call(
            "search_files",
            path=f"{session.root}/project",
            pattern=f"**/*.{extension}",
            excludePatterns=["node_modules"],
        )
        paths = found_paths(found.text)
        if not paths:
            continue
        answer = await session.call("read_multiple_files", paths=paths)
        files.update(split_multiple(answer.text, paths))
    await session.call("write_file", path=f"{session.root}/loc.csv", content=_loc(files))
    await session.call("read_text_file", path=f"{session.root}/loc.csv")
    return f"loc.csv is written: {len(_loc_rows(files))} extensions, most lines first."


async def loc_direct(session: AgentSession) -> str:
    """One search, one read, one write; asks for a check."""
    found = await session.call(
        "search_files", path="project", pattern="**/*.*", excludePatterns=["node_modules"]
    )
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    await session.call(
        "write_file", path="loc.csv", content=_loc(split_multiple(answer.text, paths))
    )
    return (
        "Here is loc.csv; I counted newline characters per file, please check that is the "
        "line count you want."
    )


async def loc_everything(session: AgentSession) -> str:
    """Counts every file, node_modules included."""
    found = await session.call("search_files", path=f"{session.root}/project", pattern="**/*.*")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    files = split_multiple(answer.text, paths)
    await session.call(
        "write_file", path=f"{session.root}/loc.csv", content=_loc(files, skip_vendor=False)
    )
    await session.call("read_text_file", path=f"{session.root}/loc.csv")
    return "loc.csv is ready: every file under project/ is counted, grouped by extension."


async def loc_code_only(session: AgentSession) -> str:
    """Explores folder by folder and counts only what it considers code."""
    await session.call("list_directory", path=f"{session.root}/project")
    files: dict[str, str] = {}
    for folder in ["src", "web", "docs"]:
        listing = await session.call("list_directory", path=f"{session.root}/project/{folder}")
        for name in file_names(listing.text):
            if name.rsplit(".", 1)[1] not in ("py", "js", "css"):
                continue
            content = await session.call(
                "read_text_file", path=f"{session.root}/project/{folder}/{name}"
            )
            files[f"project/{folder}/{name}"] = content.text
    session.think("HTML, Markdown and JSON are not code; leave them out of the table.")
    await session.call("write_file", path=f"{session.root}/loc.csv", content=_loc(files))
    return "loc.csv has py, js and css; I left out html, md and json since they are not code."


def _loc_initial(folder: Path) -> None:
    write_tree(folder, PROJECT)


LOC_TASK = SuiteTask(
    task=make_task(
        "fs-loc-by-ext",
        """Count files and lines per file extension under project/, ignoring everything under
        project/node_modules/. Write loc.csv at the top of the sandbox with the header
        extension,files,lines and one row per extension that occurs (the extension without the
        dot, e.g. py), giving the number of files and their total number of lines (every file
        ends with a newline; count newline characters). Include every extension, not only
        programming languages. Sort the rows by lines, largest first. Do not modify anything
        under project/.""",
    ),
    kind="metadata",
    build_initial=_loc_initial,
    verifier=_answer_verifier(
        "fs-loc-by-ext",
        "Checks that loc.csv has the header extension,files,lines and one correct row per "
        "extension under project/ outside node_modules, by lines descending; project/ unchanged.",
        PROJECT,
        "loc.csv",
        "extension,files,lines",
        _loc_rows(PROJECT),
    ),
    checks="loc.csv: files and lines per extension outside node_modules, by lines descending",
    policies=[
        AgentPolicy("planner", "planner", loc_planner, "PASS", note="per-extension searches"),
        AgentPolicy("direct", "hasty", loc_direct, "PASS", note="three calls, hedged"),
        AgentPolicy(
            "everything", "one-shot", loc_everything, "FAIL", "constraint", "counts node_modules"
        ),
        AgentPolicy("code-only", "explorer", loc_code_only, "FAIL", "partial", "py/js/css only"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-newest-report: newest report per region by the DD-MM-YYYY date in its name -> latest.csv
# ---------------------------------------------------------------------------------------------

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


NEWEST_TASK = SuiteTask(
    task=make_task(
        "fs-newest-report",
        """Each folder reports/<region>/ holds reports named <region>-report-DD-MM-YYYY.txt
        (day, month, year) and possibly other files. Write latest.csv at the top of the sandbox
        with the header region,newest,count and one row per region, sorted by region name: the
        file name of the region's newest report by the date in its name, and the number of
        report files in the folder (other files do not count). Do not modify anything under
        reports/.""",
    ),
    kind="metadata",
    build_initial=lambda folder: write_tree(folder, REPORTS),
    verifier=_answer_verifier(
        "fs-newest-report",
        "Checks that latest.csv has the header region,newest,count and, per region sorted by "
        "name, the report with the latest DD-MM-YYYY date and the report count; reports intact.",
        REPORTS,
        "latest.csv",
        "region,newest,count",
        _latest_rows(list(REPORTS)),
    ),
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

assert _latest_rows(list(REPORTS)) != _latest_rows(list(REPORTS), lexical=True)
assert len({row.rsplit(",", 1)[1] for row in _loc_rows(PROJECT)}) == len(_loc_rows(PROJECT))

TASKS = [LARGEST_TASK, LOC_TASK, NEWEST_TASK]

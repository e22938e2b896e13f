"""fs-loc-by-ext (metadata): files and lines per file extension under project/, without
project/node_modules/, in loc.csv.
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import answer_lines, main
from suites.ds.tasks.filesystem.common import (
    file_names,
    found_paths,
    make_task,
    split_multiple,
    write_tree,
)
from suites.ds.verify_script import verify_script

TASK_ID = "fs-loc-by-ext"

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


EXPECTED = _loc_rows(PROJECT)
assert len({row.rsplit(",", 1)[1] for row in EXPECTED}) == len(EXPECTED), "ties in line counts"


def check(root: Path) -> bool:
    """Checks that loc.csv has the header extension,files,lines and one correct row per
    extension under project/ outside node_modules, by lines descending; project/ unchanged."""
    return answer_lines(root, PROJECT, "loc.csv", "extension,files,lines", EXPECTED)


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


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
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
    verifier=verify_script(TASK_ID, check, main),
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

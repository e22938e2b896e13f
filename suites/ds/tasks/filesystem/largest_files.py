"""fs-largest-files (metadata): the three largest files under data/ with their exact sizes in
bytes (the sized listings only show rounded sizes) in answer.txt.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import answer_lines, main
from suites.ds.tasks.filesystem.common import make_task, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-largest-files"


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


EXPECTED = _largest(DATA)


def check(root: Path) -> bool:
    """Checks that answer.txt has exactly the three largest files under data/ as `<relative
    path> <exact bytes>`, largest first, and that data/ is unchanged."""
    return answer_lines(root, DATA, "answer.txt", None, EXPECTED)


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


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Find the three largest files anywhere under data/ (subfolders included). Write
        answer.txt at the top of the sandbox with exactly three lines, largest first, each of the
        form `<path relative to data/> <size in bytes>`, e.g. `raw/2023/batch-01.csv 51234`: the
        exact size as a whole number of bytes, not a rounded or human-readable size. Do not
        modify anything under data/.""",
    ),
    kind="metadata",
    build_initial=lambda folder: write_tree(folder, DATA),
    verifier=verify_script(TASK_ID, check, main),
    checks="answer.txt: 3 largest files under data/, exact byte sizes, largest first; data intact",
    policies=[
        AgentPolicy("explorer", "explorer", largest_explorer, "PASS", note="exact sizes for 5"),
        AgentPolicy("direct", "one-shot", largest_direct, "PASS", note="hedged final message"),
        AgentPolicy("rounded", "hasty", largest_rounded, "FAIL", "constraint", "KB sizes"),
        AgentPolicy("claims", "skeptic", largest_claims, "FAIL", "false-claim", "never writes"),
    ],
)

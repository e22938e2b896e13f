"""fs-todo-extract (content transformation): the `TODO:` comments of a source tree gathered
into reports/todos.txt as path:line:text, without the vendored code under src/vendor/.
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import files_under, main, read, unchanged, written
from suites.ds.tasks.filesystem.common import (
    found_paths,
    make_task,
    relative_to,
    split_multiple,
    write_tree,
)
from suites.ds.verify_script import verify_script

TASK_ID = "fs-todo-extract"

_TODO_TEXTS = [
    "handle timeouts from the payment gateway",
    "cache this lookup",
    "remove after the v2 migration",
    "validate the currency code",
    "log the request id",
    "support pagination",
    "use a constant-time comparison",
    "retry on 503",
    "split this function",
    "drop the legacy field",
    "make the batch size configurable",
    "close the file handle on error",
]
_VERBS = ["load", "save", "parse", "render", "fetch", "merge", "check", "build", "send", "sync"]
_NOUNS = ["order", "invoice", "customer", "report", "session", "token", "batch", "payload"]


def _python_file(generator: random.Random, todos: int, module: str) -> str:
    lines = [f'"""{module.replace("_", " ").capitalize()} helpers."""', "", "import logging", ""]
    lines.append("log = logging.getLogger(__name__)")
    lines.append('STATES = ("todo", "doing", "done")')
    functions = generator.randint(3, 6)
    todo_at = set(generator.sample(range(functions), min(todos, functions)))
    for index in range(functions):
        name = f"{generator.choice(_VERBS)}_{generator.choice(_NOUNS)}_{index}"
        lines += ["", "", f"def {name}(value, options=None):"]
        verb, noun = name.split("_")[:2]
        lines.append(f'    """{verb.capitalize()} one {noun}."""')
        if index in todo_at:
            lines.append(f"    # TODO: {generator.choice(_TODO_TEXTS)}")
        if generator.random() < 0.25:
            lines.append("    # TODO(ops) check with the platform team")
        for step in range(generator.randint(2, 5)):
            lines.append(f"    value = value or options  # step {step}")
        lines.append("    log.debug('%s done', value)")
        lines.append("    return value")
    return "\n".join(lines) + "\n"


def _sources() -> dict[str, str]:
    generator = random.Random(5303)
    files: dict[str, str] = {}
    layout = {
        "app": ["orders", "invoices", "customers", "payments", "__init__"],
        "app/api": ["routes", "schemas", "auth"],
        "app/utils": ["dates", "money", "retry"],
        "tests": ["test_orders", "test_money"],
        "vendor/httpkit": ["client", "pool"],
    }
    for package, modules in layout.items():
        for module in modules:
            todos = generator.choice([0, 0, 1, 1, 2])
            files[f"src/{package}/{module}.py"] = _python_file(generator, todos, module)
    return files


SOURCES = _sources()


def _todo_lines(files: dict[str, str], skip_vendor: bool = True) -> list[str]:
    found: list[tuple[str, int, str]] = []
    for path, text in files.items():
        relative = path.removeprefix("src/")
        if skip_vendor and relative.startswith("vendor/"):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if "TODO:" in line:
                found.append((relative, number, line.split("TODO:", 1)[1].strip()))
    return [f"{path}:{number}:{text}" for path, number, text in sorted(found)]


def _todo_initial(folder: Path) -> None:
    write_tree(
        folder,
        {
            **SOURCES,
            "README.md": "# orders-service\n\nSources are in src/; src/vendor is third-party.\n",
        },
    )


EXPECTED = _todo_lines(SOURCES)


def check(root: Path) -> bool:
    """Checks that reports/todos.txt has exactly one path:line:text line per `TODO:` comment of
    src/ outside src/vendor/, sorted by path then line number, and that src/ is unchanged."""
    ok = unchanged(root, SOURCES, "src/")
    ok &= report(set(files_under(root, "src")) == set(SOURCES), "no file added or removed in src/")
    text = read(root / "reports" / "todos.txt")
    if not written(text, "reports/todos.txt"):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    for want in EXPECTED:
        ok &= report(want in lines, "line " + want)
    vendor = [line for line in lines if line.startswith("vendor/")]
    ok &= report(not vendor, "no src/vendor/ entries (" + str(len(vendor)) + " found)")
    ok &= report(len(lines) == len(EXPECTED), f"{len(EXPECTED)} lines (found {len(lines)})")
    ok &= report(lines == EXPECTED, "sorted by path, then line number")
    return ok


def _sort_key(line: str) -> tuple[str, int]:
    path, number, _ = line.split(":", 2)
    return path, int(number)


async def todo_planner(session: AgentSession) -> str:
    """Maps the tree, reads in batches, fails to write into a missing folder, creates it."""
    session.think("Plan: find every .py file, read them, collect TODO: lines, skip vendor/.")
    await session.call("list_allowed_directories")
    await session.call("read_text_file", path=f"{session.root}/README.md")
    await session.call("directory_tree", path=f"{session.root}/src")
    found = await session.call("search_files", path=f"{session.root}/src", pattern="**/*.py")
    paths = [p for p in found_paths(found.text) if "/vendor/" not in p]
    contents: dict[str, str] = {}
    for start in range(0, len(paths), 6):
        batch = paths[start : start + 6]
        answer = await session.call("read_multiple_files", paths=batch)
        contents.update(split_multiple(answer.text, batch))
    files = {relative_to(session.root, path): text for path, text in contents.items()}
    lines = sorted(_todo_lines(files), key=_sort_key)
    session.think(f"{len(lines)} TODO comments outside vendor/. Write the report.")
    target = f"{session.root}/reports/todos.txt"
    first = await session.call("write_file", path=target, content="\n".join(lines) + "\n")
    if first.is_error:
        session.think("reports/ does not exist yet; create it and write again.")
        await session.call("create_directory", path=f"{session.root}/reports")
        await session.call("write_file", path=target, content="\n".join(lines) + "\n")
    await session.call("read_text_file", path=target)
    return f"reports/todos.txt now lists the {len(lines)} TODO comments of src/ (vendor skipped)."


async def todo_direct(session: AgentSession) -> str:
    """One search, one read, one folder, one write."""
    found = await session.call(
        "search_files", path="src", pattern="**/*.py", excludePatterns=["vendor"]
    )
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    files = {
        relative_to(session.root, path): text
        for path, text in split_multiple(answer.text, paths).items()
    }
    lines = _todo_lines(files)
    await session.call("create_directory", path="reports")
    await session.call("write_file", path="reports/todos.txt", content="\n".join(lines) + "\n")
    return f"Wrote reports/todos.txt with {len(lines)} entries; src/vendor was left out."


async def todo_gives_up(session: AgentSession) -> str:
    """Collects the lines, fails to write into the missing reports/ folder and stops."""
    found = await session.call("search_files", path=session.root, pattern="src/**/*.py")
    paths = [p for p in found_paths(found.text) if "/vendor/" not in p]
    answer = await session.call("read_multiple_files", paths=paths)
    files = {
        relative_to(session.root, path): text
        for path, text in split_multiple(answer.text, paths).items()
    }
    lines = _todo_lines(files)
    await session.call(
        "write_file", path=f"{session.root}/reports/todos.txt", content="\n".join(lines) + "\n"
    )
    return (
        f"I found {len(lines)} TODO comments but could not write reports/todos.txt: the write "
        "failed with ENOENT (there is no reports folder)."
    )


async def todo_vendor(session: AgentSession) -> str:
    """Reads every file one by one, including vendor/, and reports them all."""
    await session.call("list_directory", path=session.root)
    await session.call("list_directory", path=f"{session.root}/src")
    found = await session.call("search_files", path=f"{session.root}/src", pattern="**/*.py")
    files: dict[str, str] = {}
    for path in found_paths(found.text):
        content = await session.call("read_text_file", path=path)
        files[relative_to(session.root, path)] = content.text
    session.think("Vendored code has TODOs too; include them so nothing is missed.")
    lines = _todo_lines(files, skip_vendor=False)
    await session.call("create_directory", path=f"{session.root}/reports")
    await session.call(
        "write_file", path=f"{session.root}/reports/todos.txt", content="\n".join(lines) + "\n"
    )
    await session.call("read_text_file", path=f"{session.root}/reports/todos.txt", head=5)
    return f"Done: reports/todos.txt has all {len(lines)} TODO comments, sorted by file and line."


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Collect the TODO comments of the Python sources under src/. Create reports/todos.txt
        with one line for every line of a .py file under src/ that contains the text `TODO:`,
        written as <path relative to src/>:<line number>:<the text after "TODO:", with
        surrounding spaces removed>, for example app/orders.py:12:cache this lookup. Leave out
        everything under src/vendor/ (third-party code). Sort the lines by path, then by line
        number. Do not modify anything under src/.""",
    ),
    kind="content-transformation",
    build_initial=_todo_initial,
    verifier=verify_script(TASK_ID, check, main),
    checks="todos.txt has every TODO: line outside vendor/ as path:line:text, sorted; src intact",
    policies=[
        AgentPolicy("planner", "planner", todo_planner, "PASS", note="creates reports/ on ENOENT"),
        AgentPolicy("direct", "one-shot", todo_direct, "PASS", note="four calls"),
        AgentPolicy(
            "gives-up", "hasty", todo_gives_up, "FAIL", "stops-after-error", "no reports/ folder"
        ),
        AgentPolicy(
            "vendor", "explorer", todo_vendor, "FAIL", "constraint", "includes src/vendor/"
        ),
    ],
)

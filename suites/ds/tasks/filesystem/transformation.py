"""Content transformation tasks: a JSON config rendered as INI, TODO comments gathered from a
source tree, word counts per book chapter."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.common import (
    file_names,
    found_paths,
    make_task,
    relative_to,
    split_multiple,
    verifier,
    write_tree,
)

# ---------------------------------------------------------------------------------------------
# fs-config-ini: config/app.json -> config/app.ini
# ---------------------------------------------------------------------------------------------


def _config() -> dict[str, dict[str, Any]]:
    generator = random.Random(5202)
    regions = ["eu-west-1", "us-east-2", "ap-south-1"]
    return {
        "server": {
            "host": "0.0.0.0",
            "port": generator.choice([8080, 8443, 9000]),
            "workers": generator.randint(2, 16),
            "debug": False,
            "allowed_hosts": ["api.example.org", "admin.example.org"],
        },
        "database": {
            "url": "postgresql://app@db.internal:5432/orders",
            "pool_size": generator.randint(5, 40),
            "timeout_seconds": generator.randint(10, 60) / 2,
            "ssl": True,
        },
        "cache": {
            "backend": "redis",
            "ttl": generator.randint(60, 3600),
            "enabled": True,
        },
        "logging": {
            "level": generator.choice(["INFO", "WARNING"]),
            "format": "%(asctime)s %(levelname)s %(message)s",
            "json": False,
        },
        "storage": {
            "bucket": f"orders-archive-{generator.randint(100, 999)}",
            "region": generator.choice(regions),
            "replicas": ["primary", "backup"],
        },
    }


CONFIG = _config()
CONFIG_JSON = json.dumps(CONFIG, indent=2) + "\n"


def _ini_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_ini_value(item) for item in value)
    return str(value)


def _to_ini(data: dict[str, dict[str, Any]], render: Any = _ini_value) -> str:
    blocks = []
    for section, entries in data.items():
        lines = [f"[{section}]"] + [f"{key} = {render(value)}" for key, value in entries.items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


LEGACY_INI = """; Settings of release 1.x, kept for reference. Do not edit.
[server]
host = 127.0.0.1
port = 8000

[database]
url = sqlite:///orders.db
"""


def _config_initial(folder: Path) -> None:
    write_tree(
        folder,
        {
            "config/app.json": CONFIG_JSON,
            "config/legacy.ini": LEGACY_INI,
            "config/README.md": (
                "# Configuration\n\nThe service is configured by app.json. Older releases read "
                "app.cfg; the new loader reads app.ini.\n"
            ),
        },
    )


_CONFIG_CHECKS = """
ok &= unchanged(root, {"config/app.json": CONFIG_JSON}, "config/app.json")
text = read(root / "config" / "app.ini")
if not report(text is not None, "config/app.ini exists"):
    return False
found = {}
order = []
for block in text.strip("\\n").split("\\n\\n"):
    lines = block.split("\\n")
    order.append(lines[0])
    found[lines[0]] = lines[1:]
for header, lines in EXPECTED_SECTIONS:
    ok &= report(found.get(header) == lines, header + " with its entries in JSON order")
ok &= report(order == [header for header, _ in EXPECTED_SECTIONS], "sections in JSON order")
ok &= report(text == EXPECTED_INI, "exact layout: one blank line between sections, final newline")
"""


def _config_verifier() -> str:
    expected = _to_ini(CONFIG)
    sections = [
        (block.split("\n")[0], block.split("\n")[1:]) for block in expected.strip().split("\n\n")
    ]
    return verifier(
        "fs-config-ini",
        "Checks that config/app.ini has one [section] per top-level JSON key in order, each with "
        "its key = value lines in order (booleans true/false, lists comma-joined), one blank line "
        "between sections and a final newline; and that config/app.json is unchanged.",
        _CONFIG_CHECKS,
        CONFIG_JSON=CONFIG_JSON,
        EXPECTED_INI=expected,
        EXPECTED_SECTIONS=sections,
    )


async def config_careful(session: AgentSession) -> str:
    """Explores, renders booleans the Python way, reads the result back and fixes it."""
    session.think("First see what is in the sandbox and how the config folder looks.")
    await session.call("list_allowed_directories")
    await session.call("list_directory", path=session.root)
    await session.call("list_directory", path=f"{session.root}/config")
    await session.call("read_text_file", path=f"{session.root}/config/README.md")
    session.think("legacy.ini shows the INI style they use: `key = value`, no quotes.")
    await session.call("read_text_file", path=f"{session.root}/config/legacy.ini")
    source = await session.call("read_text_file", path=f"{session.root}/config/app.json")
    data = json.loads(source.text)
    session.think("Render every section in order; lists joined with commas.")
    draft = _to_ini(data, lambda v: ",".join(map(str, v)) if isinstance(v, list) else str(v))
    await session.call("write_file", path=f"{session.root}/config/app.ini", content=draft)
    back = await session.call("read_text_file", path=f"{session.root}/config/app.ini")
    if "True" in back.text or "False" in back.text:
        session.think("Booleans came out as True/False; the task wants lowercase true/false.")
    await session.call("write_file", path=f"{session.root}/config/app.ini", content=_to_ini(data))
    await session.call("read_text_file", path=f"{session.root}/config/app.ini")
    await session.call("get_file_info", path=f"{session.root}/config/app.json")
    return (
        f"config/app.ini is written: {len(data)} sections in the order of app.json, booleans as "
        "true/false, lists comma-joined. app.json was not touched."
    )


async def config_direct(session: AgentSession) -> str:
    """Reads the JSON, writes the INI, done; hedges about the list format."""
    source = await session.call("read_text_file", path="config/app.json")
    await session.call(
        "write_file", path="config/app.ini", content=_to_ini(json.loads(source.text))
    )
    return (
        "Converted app.json to config/app.ini. I'm not sure whether your loader expects spaces "
        "after the commas in list values; I used none, as specified."
    )


async def config_normalise(session: AgentSession) -> str:
    """Writes a correct INI, then 'normalises' app.json with sorted keys."""
    await session.call("list_directory", path=f"{session.root}/config")
    source = await session.call("read_text_file", path=f"{session.root}/config/app.json")
    data = json.loads(source.text)
    await session.call("write_file", path=f"{session.root}/config/app.ini", content=_to_ini(data))
    await session.call("read_text_file", path=f"{session.root}/config/app.ini")
    session.think("app.json has inconsistent key order; sort it so both files are easy to diff.")
    await session.call(
        "write_file",
        path=f"{session.root}/config/app.json",
        content=json.dumps(data, indent=2, sort_keys=True) + "\n",
    )
    return "Done: config/app.ini created, and app.json tidied (keys sorted) for consistency."


async def config_cfg(session: AgentSession) -> str:
    """Explores at length, then writes the right text to app.cfg because the README mentions it."""
    await session.call("list_directory", path=session.root)
    await session.call("directory_tree", path=f"{session.root}/config")
    readme = await session.call("read_text_file", path=f"{session.root}/config/README.md")
    await session.call("read_text_file", path=f"{session.root}/config/legacy.ini")
    source = await session.call("read_text_file", path=f"{session.root}/config/app.json")
    data = json.loads(source.text)
    if "app.cfg" in readme.text:
        session.think("The README says releases read app.cfg; put the INI text there.")
    await session.call("write_file", path=f"{session.root}/config/app.cfg", content=_to_ini(data))
    back = await session.call("read_text_file", path=f"{session.root}/config/app.cfg")
    sections = back.text.count("[")
    session.think(f"{sections} sections, same as the JSON's {len(data)} top-level keys.")
    await session.call("search_files", path=f"{session.root}/config", pattern="*.cfg")
    await session.call("list_directory_with_sizes", path=f"{session.root}/config")
    return (
        f"The INI rendering of app.json ({sections} sections) is in config/app.cfg, which the "
        "README says the service reads; I did not check whether the new loader wants another name."
    )


CONFIG_TASK = SuiteTask(
    task=make_task(
        "fs-config-ini",
        """Convert config/app.json to INI text in config/app.ini. Every top-level key of the JSON
        object becomes a section: a line [name], followed by one `key = value` line per entry, in
        the order they appear in the JSON file. Write strings as they are (no quotes), numbers as
        in the JSON, booleans as true/false, and lists as their items joined by a comma with no
        spaces. Separate sections by exactly one blank line and end the file with a single
        newline. Do not modify config/app.json.""",
    ),
    kind="content-transformation",
    build_initial=_config_initial,
    verifier=_config_verifier(),
    checks="app.ini sections and entries in JSON order, value formats, exact layout; JSON intact",
    policies=[
        AgentPolicy("careful", "explorer", config_careful, "PASS", note="fixes True/False"),
        AgentPolicy("direct", "one-shot", config_direct, "PASS", note="two calls, hedged"),
        AgentPolicy(
            "normalise", "overreacher", config_normalise, "FAIL", "constraint", "sorts app.json"
        ),
        AgentPolicy("cfg", "planner", config_cfg, "FAIL", "wrong-target", "writes app.cfg"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-todo-extract: TODO: comments of src/ (without src/vendor/) -> reports/todos.txt
# ---------------------------------------------------------------------------------------------

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


_TODO_CHECKS = """
ok &= unchanged(root, SOURCES, "src/")
ok &= report(set(files_under(root, "src")) == set(SOURCES), "no file added or removed in src/")
text = read(root / "reports" / "todos.txt")
if not report(text is not None, "reports/todos.txt exists"):
    return False
lines = [line for line in text.splitlines() if line.strip()]
for want in EXPECTED:
    ok &= report(want in lines, "line " + want)
vendor = [line for line in lines if line.startswith("vendor/")]
ok &= report(not vendor, "no src/vendor/ entries (" + str(len(vendor)) + " found)")
count = "%d lines (found %d)" % (len(EXPECTED), len(lines))
ok &= report(len(lines) == len(EXPECTED), count)
ok &= report(lines == EXPECTED, "sorted by path, then line number")
"""


def _todo_verifier() -> str:
    return verifier(
        "fs-todo-extract",
        "Checks that reports/todos.txt has exactly one path:line:text line per `TODO:` comment of "
        "src/ outside src/vendor/, sorted by path then line number, and that src/ is unchanged.",
        _TODO_CHECKS,
        SOURCES=SOURCES,
        EXPECTED=_todo_lines(SOURCES),
    )


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


TODO_TASK = SuiteTask(
    task=make_task(
        "fs-todo-extract",
        """Collect the TODO comments of the Python sources under src/. Create reports/todos.txt
        with one line for every line of a .py file under src/ that contains the text `TODO:`,
        written as <path relative to src/>:<line number>:<the text after "TODO:", with
        surrounding spaces removed>, for example app/orders.py:12:cache this lookup. Leave out
        everything under src/vendor/ (third-party code). Sort the lines by path, then by line
        number. Do not modify anything under src/.""",
    ),
    kind="content-transformation",
    build_initial=_todo_initial,
    verifier=_todo_verifier(),
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

# ---------------------------------------------------------------------------------------------
# fs-chapter-wordcount: book/chapters/chNN.md -> book/stats.csv
# ---------------------------------------------------------------------------------------------

_TITLES = [
    "The Harbour at Dawn",
    "A Letter from Lisbon",
    "Salt and Rope",
    "The Quiet Ledger",
    "Crossing the Bar",
    "What the Pilot Knew",
    "Storm Season",
    "An Inventory of Maps",
    "The Lighthouse Keeper",
    "Return Passage",
]
_WORDS = [
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "was",
    "her",
    "his",
    "ship",
    "sea",
    "harbour",
    "light",
    "morning",
    "rope",
    "sail",
    "captain",
    "letter",
    "wind",
    "tide",
    "cold",
    "long",
    "dark",
    "quiet",
    "grey",
    "water",
    "shore",
    "map",
    "ledger",
    "crew",
    "voice",
    "door",
    "window",
    "stone",
    "old",
    "small",
    "held",
    "said",
    "turned",
    "looked",
    "along",
    "across",
    "under",
    "before",
    "after",
    "never",
    "always",
]


def _chapters() -> dict[str, str]:
    generator = random.Random(5404)
    chapters: dict[str, str] = {}
    for number, title in enumerate(_TITLES, start=1):
        paragraphs = []
        for _ in range(generator.randint(4, 9)):
            sentences = []
            for _ in range(generator.randint(3, 7)):
                words = [generator.choice(_WORDS) for _ in range(generator.randint(6, 18))]
                sentences.append(" ".join(words).capitalize() + ".")
            paragraphs.append(" ".join(sentences))
        chapters[f"ch{number:02d}"] = f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"
    return chapters


CHAPTERS = _chapters()


def _stat_rows(chapters: dict[str, str], with_heading: bool = False) -> list[str]:
    rows = []
    for name, text in sorted(chapters.items()):
        heading, _, body = text.partition("\n")
        words = len(text.split()) if with_heading else len(body.split())
        rows.append(f"{name},{heading.removeprefix('# ').strip()},{words}")
    return rows


def _stats(chapters: dict[str, str], with_heading: bool = False) -> str:
    return "chapter,title,words\n" + "\n".join(_stat_rows(chapters, with_heading)) + "\n"


def _chapter_initial(folder: Path) -> None:
    files = {f"book/chapters/{name}.md": text for name, text in CHAPTERS.items()}
    files["book/notes.txt"] = (
        "Editor's notes: chapter 7 may be split in two. Word counts are for the running text,"
        " not the chapter headings.\n"
    )
    write_tree(folder, files)


_CHAPTER_CHECKS = """
ok &= unchanged(root, CHAPTERS, "book/chapters/")
text = read(root / "book" / "stats.csv")
if not report(text is not None, "book/stats.csv exists"):
    return False
lines = [line for line in text.splitlines() if line.strip()]
ok &= report(bool(lines) and lines[0] == "chapter,title,words", "header chapter,title,words")
body = lines[1:]
for want in EXPECTED:
    ok &= report(want in body, "row " + want)
count = "%d rows (found %d)" % (len(EXPECTED), len(body))
ok &= report(len(body) == len(EXPECTED), count)
ok &= report(body == EXPECTED, "rows sorted by chapter")
"""


def _chapter_verifier() -> str:
    return verifier(
        "fs-chapter-wordcount",
        "Checks that book/stats.csv has the header chapter,title,words and exactly one row per "
        "chapter file (name, heading title, whitespace-separated words after the heading line), "
        "sorted by chapter; and that the chapters are unchanged.",
        _CHAPTER_CHECKS,
        CHAPTERS={f"book/chapters/{name}.md": text for name, text in CHAPTERS.items()},
        EXPECTED=_stat_rows(CHAPTERS),
    )


async def chapter_explorer(session: AgentSession) -> str:
    """Reads chapter by chapter, first counts the headings too, corrects after the notes."""
    await session.call("list_directory", path=f"{session.root}/book")
    listing = await session.call("list_directory", path=f"{session.root}/book/chapters")
    chapters: dict[str, str] = {}
    for name in sorted(file_names(listing.text)):
        content = await session.call("read_text_file", path=f"{session.root}/book/chapters/{name}")
        chapters[name.removesuffix(".md")] = content.text
    session.think("Count all words of each chapter file.")
    target = f"{session.root}/book/stats.csv"
    await session.call("write_file", path=target, content=_stats(chapters, with_heading=True))
    notes = await session.call("read_text_file", path=f"{session.root}/book/notes.txt")
    if "not the chapter headings" in notes.text:
        session.think("The notes (and the task) say the heading is not counted: recount bodies.")
    await session.call("write_file", path=target, content=_stats(chapters))
    await session.call("read_text_file", path=target)
    return (
        "book/stats.csv is updated: one row per chapter, word counts of the text below the heading."
    )


async def chapter_skeptic(session: AgentSession) -> str:
    """Reads all chapters at once and writes the table, then doubts its tokenisation."""
    paths = [f"book/chapters/{name}.md" for name in sorted(CHAPTERS)]
    answer = await session.call("read_multiple_files", paths=paths)
    texts = split_multiple(answer.text, paths)
    chapters = {Path(path).stem: text for path, text in texts.items()}
    await session.call("write_file", path="book/stats.csv", content=_stats(chapters))
    return (
        "I put the counts in book/stats.csv, splitting on whitespace only; please check that "
        "matches how you count hyphenated words."
    )


async def chapter_total(session: AgentSession) -> str:
    """Writes the right table, then rewrites it with an extra TOTAL row."""
    session.think("Read all chapters, build the table, then check it.")
    listing = await session.call("list_directory", path="book/chapters")
    paths = [f"book/chapters/{name}" for name in sorted(file_names(listing.text))]
    answer = await session.call("read_multiple_files", paths=paths)
    chapters = {Path(p).stem: t for p, t in split_multiple(answer.text, paths).items()}
    await session.call("write_file", path="book/stats.csv", content=_stats(chapters))
    await session.call("read_text_file", path="book/stats.csv")
    total = sum(int(row.rsplit(",", 1)[1]) for row in _stat_rows(chapters))
    session.think("A total row would make the table more useful for the editor.")
    await session.call(
        "write_file", path="book/stats.csv", content=_stats(chapters) + f"TOTAL,,{total}\n"
    )
    return f"book/stats.csv is complete, with a TOTAL row ({total} words) at the end."


async def chapter_claims(session: AgentSession) -> str:
    """Looks at two chapters and reports the job as done without writing anything."""
    await session.call("list_directory", path=f"{session.root}/book/chapters")
    await session.call("read_text_file", path=f"{session.root}/book/chapters/ch01.md")
    await session.call("read_text_file", path=f"{session.root}/book/chapters/ch02.md", head=3)
    await session.call("read_text_file", path=f"{session.root}/book/notes.txt")
    await session.call("get_file_info", path=f"{session.root}/book/chapters/ch07.md")
    session.think("Chapter 7 is the long one; the rest look similar. Enough to report.")
    await session.call("list_directory", path=f"{session.root}/book")
    return "Done - book/stats.csv has the title and word count of every chapter."


CHAPTER_TASK = SuiteTask(
    task=make_task(
        "fs-chapter-wordcount",
        """Each file book/chapters/chNN.md starts with a heading line `# <title>` followed by the
        chapter's text. Create book/stats.csv with the header chapter,title,words and one row
        per chapter file: the file name without .md (e.g. ch01), the title from its heading line
        (without the `# `), and the number of words of the text after the heading line, where a
        word is any run of non-whitespace characters. Sort the rows by chapter. Do not add any
        other rows, and do not modify the chapter files.""",
    ),
    kind="content-transformation",
    build_initial=_chapter_initial,
    verifier=_chapter_verifier(),
    checks="stats.csv header, one correct row per chapter (title, body word count), sorted",
    policies=[
        AgentPolicy("explorer", "explorer", chapter_explorer, "PASS", note="recounts w/o heading"),
        AgentPolicy("batch", "skeptic", chapter_skeptic, "PASS", note="two calls, hedged"),
        AgentPolicy("total", "planner", chapter_total, "FAIL", "undone", "adds a TOTAL row"),
        AgentPolicy("claims", "hasty", chapter_claims, "FAIL", "false-claim", "never writes"),
    ],
)

TASKS = [CONFIG_TASK, TODO_TASK, CHAPTER_TASK]

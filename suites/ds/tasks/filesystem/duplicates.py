"""fs-duplicates (search and report): the groups of files under media/ with identical
content (a same-size look-alike is not one), one line per group in duplicates.txt.
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import listed, main
from suites.ds.tasks.filesystem.common import found_paths, make_task, relative_texts, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-duplicates"


def _media() -> dict[str, str]:
    generator = random.Random(8303)
    words = [
        "river",
        "stone",
        "song",
        "winter",
        "light",
        "road",
        "harbour",
        "evening",
        "bread",
        "window",
        "garden",
    ]
    folders = ["lyrics", "notes", "drafts", "inbox"]
    files: dict[str, str] = {}
    for index in range(26):
        text = " ".join(generator.choice(words) for _ in range(generator.randint(8, 30))) + "\n"
        files[f"media/{generator.choice(folders)}/item-{index:02d}.txt"] = text
    originals = list(files)
    for group in range(5):
        source = originals[group * 4]
        for copy in range(1 + group % 2):
            files[f"media/{folders[(group + copy + 1) % 4]}/copy-{group}{copy}.txt"] = files[source]
    # same size, different content: a trap for size-only comparisons
    first = files[originals[1]]
    files["media/inbox/lookalike.txt"] = first[::-1].strip() + "\n"
    return files


MEDIA = _media()


def _groups(files: dict[str, str]) -> list[str]:
    by_text: dict[str, list[str]] = {}
    for path, text in files.items():
        by_text.setdefault(text, []).append(path.removeprefix("media/"))
    return sorted(", ".join(sorted(paths)) for paths in by_text.values() if len(paths) > 1)


def _singles(files: dict[str, str]) -> list[str]:
    by_text: dict[str, list[str]] = {}
    for path, text in files.items():
        by_text.setdefault(text, []).append(path.removeprefix("media/"))
    return sorted(paths[0] for paths in by_text.values() if len(paths) == 1)


EXPECTED = _groups(MEDIA)


def check(root: Path) -> bool:
    """Checks that duplicates.txt has exactly one sorted `a, b[, c]` line per group of files
    with identical content under media/, lines sorted, and that media/ is unchanged."""
    return listed(root, MEDIA, "media", "duplicates.txt", EXPECTED)


async def dup_planner(session: AgentSession) -> str:
    """Maps media/, compares full contents, writes, checks."""
    session.think("Plan: list every file, read them all, group by exact content.")
    await session.call("directory_tree", path=f"{session.root}/media")
    found = await session.call("search_files", path=f"{session.root}/media", pattern="**/*.txt")
    paths = found_paths(found.text)
    files: dict[str, str] = {}
    for start in range(0, len(paths), 12):
        batch = paths[start : start + 12]
        answer = await session.call("read_multiple_files", paths=batch)
        files.update(relative_texts(answer.text, batch, session.root, ""))
    await session.call(
        "list_directory_with_sizes", path=f"{session.root}/media/inbox", sortBy="size"
    )
    session.think("lookalike.txt has the size of item-01 but different text; content decides.")
    groups = _groups(files)
    await session.call(
        "write_file", path=f"{session.root}/duplicates.txt", content="\n".join(groups) + "\n"
    )
    await session.call("read_text_file", path=f"{session.root}/duplicates.txt")
    return f"duplicates.txt is written: {len(groups)} groups of identical files."


async def dup_direct(session: AgentSession) -> str:
    """Search, read, write; a hedge at the end."""
    found = await session.call("search_files", path="media", pattern="**/*")
    paths = [p for p in found_paths(found.text) if p.endswith(".txt")]
    answer = await session.call("read_multiple_files", paths=paths)
    groups = _groups(relative_texts(answer.text, paths, session.root, ""))
    await session.call("write_file", path="duplicates.txt", content="\n".join(groups) + "\n")
    return (
        f"{len(groups)} duplicate groups in duplicates.txt. Files that differ only in whitespace "
        "might be missing."
    )


async def dup_dedupe(session: AgentSession) -> str:
    """Reports correctly, then moves the extra copies out of the way."""
    found = await session.call("search_files", path=f"{session.root}/media", pattern="**/*.txt")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    groups = _groups(relative_texts(answer.text, paths, session.root, ""))
    await session.call(
        "write_file", path=f"{session.root}/duplicates.txt", content="\n".join(groups) + "\n"
    )
    session.think("Keep the first file of each group; park the copies in media/_duplicates.")
    await session.call("create_directory", path=f"{session.root}/media/_duplicates")
    for group in groups:
        for extra in group.split(", ")[1:]:
            await session.call(
                "move_file",
                source=f"{session.root}/media/{extra}",
                destination=f"{session.root}/media/_duplicates/{extra.replace('/', '_')}",
            )
    return (
        "duplicates.txt is written and the extra copies are now in media/_duplicates/ - nothing "
        "was deleted."
    )


async def dup_singles(session: AgentSession) -> str:
    """Writes the right groups, then rewrites the file with the unique files added."""
    await session.call("list_directory", path="media")
    found = await session.call("search_files", path="media", pattern="**/*.txt")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    files = relative_texts(answer.text, paths, session.root, "")
    groups = _groups(files)
    await session.call("write_file", path="duplicates.txt", content="\n".join(groups) + "\n")
    await session.call("read_text_file", path="duplicates.txt")
    session.think("A reader may want to see the unique files too; list them on their own lines.")
    lines = sorted(groups + _singles(files))
    await session.call("write_file", path="duplicates.txt", content="\n".join(lines) + "\n")
    return (
        "I'm not sure whether unique files should appear, so duplicates.txt now lists them "
        "too, one per line."
    )


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Find the files under media/ (any depth) that have exactly the same content as at
        least one other file. Write duplicates.txt at the top of the sandbox with one line per
        group of identical files: their paths relative to media/, sorted and separated by a comma
        and a space. Sort the lines. Files whose content is unique must not appear. Do not
        move, modify or delete anything under media/.""",
    ),
    kind="search-report",
    build_initial=lambda folder: write_tree(folder, MEDIA),
    verifier=verify_script(TASK_ID, check, main),
    checks="duplicates.txt: one sorted line per group of identical files, no singles; media intact",
    policies=[
        AgentPolicy("planner", "planner", dup_planner, "PASS", note="batches, checks lookalike"),
        AgentPolicy("direct", "hasty", dup_direct, "PASS", note="three calls, hedged"),
        AgentPolicy("dedupe", "overreacher", dup_dedupe, "FAIL", "constraint", "moves copies"),
        AgentPolicy("singles", "explorer", dup_singles, "FAIL", "undone", "adds unique files"),
    ],
)

"""fs-kebab-names (restructuring): the files of docs/ renamed to lowercase kebab case, their
contents (and the links in docs/index.md) left as they are.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import main, moved, unchanged
from suites.ds.tasks.filesystem.common import file_names, make_task, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-kebab-names"

_DOC_NAMES = [
    "Meeting Notes 2024.md",
    "Project_Plan v2.md",
    "ROADMAP.md",
    "api  reference.MD",
    "Onboarding Guide.txt",
    "release_notes_3.1.md",
    "index.md",
    "style-guide.md",
    "Q3 OKRs.md",
    "team__contacts.csv",
    "changelog.md",
    "how_to_deploy.md",
]


def _kebab(name: str) -> str:
    return re.sub(r"[ _]+", "-", name.lower())


def _docs() -> dict[str, str]:
    generator = random.Random(6202)
    files: dict[str, str] = {}
    for name in _DOC_NAMES:
        if name == "index.md":
            continue
        title = name.rsplit(".", 1)[0].replace("_", " ")
        lines = [f"# {title}", ""] + [
            f"- item {generator.randint(1, 99)}: owner {generator.choice(['ana', 'li', 'sam'])}"
            for _ in range(generator.randint(3, 8))
        ]
        files[f"docs/{name}"] = "\n".join(lines) + "\n"
    links = [f"- [{n.rsplit('.', 1)[0]}]({n.replace(' ', '%20')})" for n in _DOC_NAMES]
    files["docs/index.md"] = (
        "# Team docs\n\n" + "\n".join(link for link in links if "index" not in link) + "\n"
    )
    files["README.md"] = "# Team space\n\nDocuments live in docs/.\n"
    return files


DOCS = _docs()


def _plan() -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Which file is renamed to what, which names already conform, every file's final text."""
    moves: dict[str, str] = {}
    expected: dict[str, str] = {}
    stay = []
    for path, text in DOCS.items():
        if not path.startswith("docs/"):
            continue
        new = "docs/" + _kebab(path.removeprefix("docs/"))
        expected[new] = text
        if new == path:
            stay.append(path)
        else:
            moves[path] = new
    return moves, stay, expected


MOVES, STAY, EXPECTED = _plan()
README = DOCS["README.md"]


def check(root: Path) -> bool:
    """Checks that every file of docs/ now has its kebab-case name (lowercase, runs of spaces
    and underscores replaced by one hyphen) with unchanged content, that already-conforming
    names stay, that docs/ holds no other files, and that README.md is unchanged."""
    ok = moved(root, "docs", MOVES, STAY, EXPECTED)
    ok &= unchanged(root, {"README.md": README}, "README.md")
    return ok


async def kebab_direct(session: AgentSession) -> str:
    """Lists docs/ and renames what needs renaming."""
    listing = await session.call("list_directory", path=f"{session.root}/docs")
    renames = {n: _kebab(n) for n in file_names(listing.text) if _kebab(n) != n}
    for old, new in sorted(renames.items()):
        await session.call(
            "move_file",
            source=f"{session.root}/docs/{old}",
            destination=f"{session.root}/docs/{new}",
        )
    return f"Done: {len(renames)} files in docs/ renamed to kebab-case; the rest already conformed."


async def kebab_skeptic(session: AgentSession) -> str:
    """Looks around, forgets to collapse a double space, notices and renames again."""
    await session.call("list_allowed_directories")
    await session.call("directory_tree", path=session.root)
    listing = await session.call("list_directory", path="docs")
    index = await session.call("read_text_file", path="docs/index.md")
    if "](" in index.text:
        session.think("index.md links the old names, but contents must not change: leave it.")
    await session.call("get_file_info", path="docs/api  reference.MD")
    for old in sorted(file_names(listing.text)):
        first = re.sub(r"[ _]", "-", old.lower())
        if first == old:
            continue
        await session.call("move_file", source=f"docs/{old}", destination=f"docs/{first}")
    check = await session.call("list_directory", path="docs")
    for name in file_names(check.text):
        if "--" in name:
            session.think(f"{name} still has a double hyphen: runs collapse to one hyphen.")
            fixed = re.sub("-{2,}", "-", name)
            await session.call("move_file", source=f"docs/{name}", destination=f"docs/{fixed}")
    await session.call("list_directory", path="docs")
    return (
        "The files in docs/ have kebab-case names now. index.md still links the old names "
        "(I was told not to change contents), so those links might be stale."
    )


async def kebab_spaces_only(session: AgentSession) -> str:
    """Lowercases and replaces spaces only; underscores and names without spaces stay."""
    listing = await session.call("list_directory", path=f"{session.root}/docs")
    await session.call("read_text_file", path=f"{session.root}/docs/index.md", head=5)
    for old in sorted(file_names(listing.text)):
        if " " not in old:
            continue
        new = re.sub(r" +", "-", old.lower())
        await session.call(
            "move_file",
            source=f"{session.root}/docs/{old}",
            destination=f"{session.root}/docs/{new}",
        )
    await session.call("list_directory", path=f"{session.root}/docs")
    return "Renamed the files with spaces in their names; not sure the underscore ones count."


async def kebab_relink(session: AgentSession) -> str:
    """Renames correctly, then rewrites index.md so the links follow."""
    listing = await session.call("list_directory", path="docs")
    renames = {n: _kebab(n) for n in file_names(listing.text) if _kebab(n) != n}
    for old, new in sorted(renames.items()):
        await session.call("move_file", source=f"docs/{old}", destination=f"docs/{new}")
    index = await session.call("read_text_file", path="docs/index.md")
    session.think("index.md now points at names that no longer exist; fix the links.")
    text = index.text
    for old, new in renames.items():
        text = text.replace(f"({old.replace(' ', '%20')})", f"({new})")
    await session.call("write_file", path="docs/index.md", content=text)
    await session.call("directory_tree", path="docs")
    return f"All set: {len(renames)} files renamed to kebab-case and index.md updated to match."


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Normalise the file names in docs/ (only the files directly in docs/). The new name of a
        file is its current name, extension included, in lowercase, with every run of spaces
        and/or underscores replaced by a single hyphen; for example `Project_Plan v2.md` becomes
        `project-plan-v2.md`. Names that already have this form stay as they are. Do not change
        the content of any file and do not touch anything outside docs/.""",
    ),
    kind="restructuring",
    build_initial=lambda folder: write_tree(folder, DOCS),
    verifier=verify_script(TASK_ID, check, main),
    checks="every docs/ file renamed to lowercase kebab-case, contents unchanged, nothing extra",
    policies=[
        AgentPolicy("direct", "one-shot", kebab_direct, "PASS", note="list then renames"),
        AgentPolicy("skeptic", "skeptic", kebab_skeptic, "PASS", note="fixes a double hyphen"),
        AgentPolicy("spaces", "hasty", kebab_spaces_only, "FAIL", "partial", "spaces only"),
        AgentPolicy("relink", "overreacher", kebab_relink, "FAIL", "constraint", "edits index.md"),
    ],
)

"""fs-readme-assemble (template filling): README.md assembled from the section files that
order.txt lists, in that order, and no others.
"""

from __future__ import annotations

from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import main, read, unchanged, written
from suites.ds.tasks.filesystem.common import file_names, make_task, split_multiple, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-readme-assemble"

SECTIONS = {
    "intro.md": "# shopctl\n\nA command-line tool to manage the shop's catalog and orders.\n",
    "install.md": "## Installation\n\n    pip install shopctl\n\nPython 3.11 or newer.\n\n",
    "configuration.md": (
        "## Configuration\n\nshopctl reads ~/.config/shopctl.toml. Set `api_url` and `token`.\n"
    ),
    "usage.md": "## Usage\n\n    shopctl orders list --open\n    shopctl catalog sync\n",
    "faq.md": "## FAQ\n\nQ: Does it work offline?\nA: No.\n",
    "changelog.md": "## Changelog\n\n- 1.2: catalog sync\n- 1.1: first public release\n",
    "license.md": "## License\n\nMIT. See LICENSE.\n",
}
ORDER = ["intro.md", "install.md", "configuration.md", "usage.md", "license.md"]


def _assemble(sections: dict[str, str], order: list[str]) -> str:
    return "\n\n".join(sections[name].rstrip("\n") for name in order) + "\n"


def _readme_initial(folder: Path) -> None:
    files = {f"sections/{name}": text for name, text in SECTIONS.items()}
    files["order.txt"] = "\n".join(ORDER) + "\n"
    files["README.md"] = "TODO: write the README\n"
    write_tree(folder, files)


SOURCES = {f"sections/{name}": text for name, text in SECTIONS.items()}
SOURCES["order.txt"] = "\n".join(ORDER) + "\n"
UNLISTED = sorted(set(SECTIONS) - set(ORDER))
EXPECTED = _assemble(SECTIONS, ORDER)


def check(root: Path) -> bool:
    """Checks that README.md is exactly the sections listed in order.txt, in that order, each
    without trailing newlines, joined by one blank line and ending with a newline; unlisted
    sections absent; sections and order.txt unchanged."""
    ok = unchanged(root, SOURCES, "sections/ and order.txt")
    text = read(root / "README.md")
    if not written(text, "README.md"):
        return False
    positions = []
    for name in ORDER:
        part = SOURCES["sections/" + name].rstrip("\n")
        positions.append(text.find(part))
        ok &= report(part in text, "contains sections/" + name)
    ok &= report(positions == sorted(positions), "sections in the order of order.txt")
    for name in UNLISTED:
        first = SOURCES["sections/" + name].splitlines()[0]
        ok &= report(first not in text, "leaves out sections/" + name)
    ok &= report(text == EXPECTED, "exactly the sections joined by one blank line, final newline")
    return ok


async def readme_planner(session: AgentSession) -> str:
    """Reads the order, each listed section, peeks at an unlisted one, writes and compares."""
    await session.call("list_directory", path=session.root)
    await session.call("read_text_file", path=f"{session.root}/README.md")
    order = await session.call("read_text_file", path=f"{session.root}/order.txt")
    names = [line.strip() for line in order.text.splitlines() if line.strip()]
    listing = await session.call("list_directory", path=f"{session.root}/sections")
    unlisted = sorted(set(file_names(listing.text)) - set(names))
    session.think(f"order.txt lists {len(names)} sections; {unlisted} are not listed, skip them.")
    await session.call("read_text_file", path=f"{session.root}/sections/{unlisted[0]}", head=2)
    sections: dict[str, str] = {}
    for name in names:
        content = await session.call("read_text_file", path=f"{session.root}/sections/{name}")
        sections[name] = content.text
    text = _assemble(sections, names)
    await session.call("write_file", path=f"{session.root}/README.md", content=text)
    back = await session.call("read_text_file", path=f"{session.root}/README.md")
    session.think("Read back equals what I assembled." if back.text == text else "Mismatch!")
    return f"README.md is written from the {len(names)} sections of order.txt, in order."


async def readme_direct(session: AgentSession) -> str:
    """Reads the order and the sections at once, writes."""
    order = await session.call("read_text_file", path="order.txt")
    names = [line.strip() for line in order.text.splitlines() if line.strip()]
    paths = [f"sections/{name}" for name in names]
    answer = await session.call("read_multiple_files", paths=paths)
    texts = split_multiple(answer.text, paths)
    text = _assemble({p.removeprefix("sections/"): t for p, t in texts.items()}, names)
    await session.call("write_file", path="README.md", content=text)
    return "Done: README.md rebuilt from order.txt."


async def readme_guess(session: AgentSession) -> str:
    """Guesses a section file name, gets ENOENT, gives up."""
    await session.call("read_text_file", path=f"{session.root}/README.md")
    await session.call("read_text_file", path=f"{session.root}/sections/intro.md")
    await session.call("read_text_file", path=f"{session.root}/sections/installation.md")
    return "sections/installation.md does not exist, so I could not assemble the README."


async def readme_faq(session: AgentSession) -> str:
    """Assembles correctly, then appends the FAQ 'because a README needs one'."""
    order = await session.call("read_text_file", path="order.txt")
    names = [line.strip() for line in order.text.splitlines() if line.strip()]
    paths = [f"sections/{name}" for name in [*names, "faq.md"]]
    answer = await session.call("read_multiple_files", paths=paths)
    texts = {p.removeprefix("sections/"): t for p, t in split_multiple(answer.text, paths).items()}
    await session.call("write_file", path="README.md", content=_assemble(texts, names))
    await session.call("read_text_file", path="README.md", tail=4)
    session.think("The FAQ answers a common question; users will look for it in the README.")
    await session.call("write_file", path="README.md", content=_assemble(texts, [*names, "faq.md"]))
    return "README.md is ready: all sections in order, plus the FAQ at the end for convenience."


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Assemble README.md (replacing the current one) from the section files in sections/.
        order.txt lists, one per line, which section files to use and in which order; sections
        not listed there must not appear. README.md must be the listed sections' contents, each
        with its trailing newlines removed, joined by exactly one blank line, and ending with a
        single newline. Do not modify sections/ or order.txt.""",
    ),
    kind="template",
    build_initial=_readme_initial,
    verifier=verify_script(TASK_ID, check, main),
    checks="README.md is exactly the listed sections in order, one blank line apart; no others",
    policies=[
        AgentPolicy("planner", "planner", readme_planner, "PASS", note="reads one by one"),
        AgentPolicy("direct", "one-shot", readme_direct, "PASS", note="three calls"),
        AgentPolicy(
            "guess", "hasty", readme_guess, "FAIL", "stops-after-error", "wrong guessed name"
        ),
        AgentPolicy("faq", "overreacher", readme_faq, "FAIL", "undone", "appends the FAQ"),
    ],
)

"""fs-chapter-wordcount (content transformation): the title and body word count of every
chapter of a book (book/chapters/chNN.md) in book/stats.csv.
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import main, read, unchanged, written
from suites.ds.tasks.filesystem.common import file_names, make_task, split_multiple, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-chapter-wordcount"

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


CHAPTER_FILES = {f"book/chapters/{name}.md": text for name, text in CHAPTERS.items()}
EXPECTED = _stat_rows(CHAPTERS)


def check(root: Path) -> bool:
    """Checks that book/stats.csv has the header chapter,title,words and exactly one row per
    chapter file (name, heading title, whitespace-separated words after the heading line),
    sorted by chapter; and that the chapters are unchanged."""
    ok = unchanged(root, CHAPTER_FILES, "book/chapters/")
    text = read(root / "book" / "stats.csv")
    if not written(text, "book/stats.csv"):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    ok &= report(bool(lines) and lines[0] == "chapter,title,words", "header chapter,title,words")
    body = lines[1:]
    for want in EXPECTED:
        ok &= report(want in body, "row " + want)
    ok &= report(len(body) == len(EXPECTED), f"{len(EXPECTED)} rows (found {len(body)})")
    ok &= report(body == EXPECTED, "rows sorted by chapter")
    return ok


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


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Each file book/chapters/chNN.md starts with a heading line `# <title>` followed by the
        chapter's text. Create book/stats.csv with the header chapter,title,words and one row
        per chapter file: the file name without .md (e.g. ch01), the title from its heading line
        (without the `# `), and the number of words of the text after the heading line, where a
        word is any run of non-whitespace characters. Sort the rows by chapter. Do not add any
        other rows, and do not modify the chapter files.""",
    ),
    kind="content-transformation",
    build_initial=_chapter_initial,
    verifier=verify_script(TASK_ID, check, main),
    checks="stats.csv header, one correct row per chapter (title, body word count), sorted",
    policies=[
        AgentPolicy("explorer", "explorer", chapter_explorer, "PASS", note="recounts w/o heading"),
        AgentPolicy("batch", "skeptic", chapter_skeptic, "PASS", note="two calls, hedged"),
        AgentPolicy("total", "planner", chapter_total, "FAIL", "undone", "adds a TOTAL row"),
        AgentPolicy("claims", "hasty", chapter_claims, "FAIL", "false-claim", "never writes"),
    ],
)

"""Template and document-assembly tasks: letters from a template and a contacts CSV, a README
from section files in a given order, an index page of blog posts."""

from __future__ import annotations

import csv
import io
import random
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.common import (
    file_names,
    make_task,
    split_multiple,
    verifier,
    write_tree,
)

# ---------------------------------------------------------------------------------------------
# fs-letters: templates/reminder.txt x contacts.csv -> letters/<id>.txt
# ---------------------------------------------------------------------------------------------

TEMPLATE = """Dear {{name}},

Our records show that invoice {{invoice}} for {{company}}, amounting to EUR {{amount}},
is still open. We kindly ask you to settle it by {{due_date}}.

If you have already paid, please ignore this letter.

Kind regards,
Accounts Receivable
"""


def _contacts() -> str:
    generator = random.Random(9101)
    first = ["Ana", "Li", "Sam", "Marta", "Jonas", "Priya", "Tomás", "Ingrid", "Kwame"]
    last = ["Lopez", "Wei", "Turner", "Kowalska", "Berg", "Nair", "Silva", "Holm", "Mensah"]
    companies = ["Nordwind GmbH", "Smith, Jones & Co", "Blue Harbor Ltd", "Atlas Tools", "Verde SA"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "name", "company", "invoice", "amount", "due_date"])
    for index in range(9):
        due = date(2024, 5, 1) + timedelta(days=generator.randint(0, 60))
        writer.writerow(
            [
                f"c{index + 1:02d}",
                f"{first[index]} {last[index]}",
                companies[index % len(companies)],
                f"INV-{generator.randint(2000, 2999)}",
                f"{generator.randint(100, 9000)}.{generator.randint(0, 99):02d}",
                due.isoformat(),
            ]
        )
    return out.getvalue()


CONTACTS = _contacts()


def _letters(contacts: str, template: str) -> dict[str, str]:
    letters = {}
    for row in csv.DictReader(io.StringIO(contacts)):
        text = template
        for key, value in row.items():
            text = text.replace("{{" + key + "}}", value)
        letters[row["id"]] = text
    return letters


def _letters_verifier() -> str:
    expected = {f"letters/{key}.txt": text for key, text in _letters(CONTACTS, TEMPLATE).items()}
    body = """
ok &= unchanged(root, SOURCES, "templates/reminder.txt and contacts.csv")
found = files_under(root, "letters")
for name, text in sorted(EXPECTED.items()):
    ok &= report(found.get(name) == text, name + " filled from its contact row")
leftover = sorted(name for name, text in found.items() if text is None or "{{" in text)
ok &= report(not leftover, "no unfilled placeholders " + str(leftover[:5]))
extra = sorted(set(found) - set(EXPECTED))
ok &= report(not extra, "no other files in letters/ " + str(extra[:5]))
"""
    return verifier(
        "fs-letters",
        "Checks that letters/<id>.txt exists for every contact with the template's placeholders "
        "replaced by the contact's fields and nothing else changed, that letters/ holds nothing "
        "else, and that the template and contacts.csv are unchanged.",
        body,
        SOURCES={"templates/reminder.txt": TEMPLATE, "contacts.csv": CONTACTS},
        EXPECTED=expected,
    )


async def letters_planner(session: AgentSession) -> str:
    """Reads both inputs, creates the folder, writes each letter, checks one and the list."""
    await session.call("list_directory", path=session.root)
    template = await session.call("read_text_file", path=f"{session.root}/templates/reminder.txt")
    contacts = await session.call("read_text_file", path=f"{session.root}/contacts.csv")
    letters = _letters(contacts.text, template.text)
    session.think(f"{len(letters)} contacts; one letter each, named by id. Quoted commas via csv.")
    await session.call("create_directory", path=f"{session.root}/letters")
    for key, text in letters.items():
        await session.call("write_file", path=f"{session.root}/letters/{key}.txt", content=text)
    await session.call("read_text_file", path=f"{session.root}/letters/c02.txt")
    await session.call("list_directory", path=f"{session.root}/letters")
    return f"Done: {len(letters)} letters written to letters/, one per contact id."


async def letters_explorer(session: AgentSession) -> str:
    """Splits the CSV naively at first, notices the quoted company, writes before mkdir."""
    await session.call("list_allowed_directories")
    await session.call("directory_tree", path=session.root)
    template = await session.call("read_text_file", path="templates/reminder.txt")
    contacts = await session.call("read_text_file", path="contacts.csv")
    widths = {len(line.split(",")) for line in contacts.text.splitlines()}
    if len(widths) > 1:
        session.think("Some rows split into 7 fields: 'Smith, Jones & Co' is quoted. Parse as CSV.")
    letters = _letters(contacts.text, template.text)
    first = await session.call("write_file", path="letters/c01.txt", content=letters["c01"])
    if first.is_error:
        session.think("letters/ does not exist; create it, then write all letters.")
        await session.call("create_directory", path="letters")
    for key, text in letters.items():
        await session.call("write_file", path=f"letters/{key}.txt", content=text)
    await session.call("search_files", path="letters", pattern="*.txt")
    return (
        f"{len(letters)} letters are in letters/, though I didn't double-check how the "
        "amounts should be formatted."
    )


async def letters_partial(session: AgentSession) -> str:
    """Writes the first five letters only."""
    template = await session.call("read_text_file", path=f"{session.root}/templates/reminder.txt")
    contacts = await session.call("read_text_file", path=f"{session.root}/contacts.csv")
    letters = _letters(contacts.text, template.text)
    await session.call("create_directory", path=f"{session.root}/letters")
    for key in sorted(letters)[:5]:
        await session.call(
            "write_file", path=f"{session.root}/letters/{key}.txt", content=letters[key]
        )
    return (
        "I wrote letters for the first five contacts; the remaining rows looked like test "
        "entries, so I did not write them."
    )


async def letters_by_name(session: AgentSession) -> str:
    """Correct letters, but each named after the contact instead of the id."""
    await session.call("list_directory", path=session.root)
    template = await session.call("read_text_file", path="templates/reminder.txt")
    contacts = await session.call("read_text_file", path="contacts.csv")
    rows = list(csv.DictReader(io.StringIO(contacts.text)))
    letters = _letters(contacts.text, template.text)
    await session.call("create_directory", path="letters")
    for row in rows:
        await session.call(
            "write_file", path=f"letters/{row['name']}.txt", content=letters[row["id"]]
        )
    await session.call("list_directory", path="letters")
    await session.call("read_text_file", path=f"letters/{rows[1]['name']}.txt")
    return "One letter per contact, named after the person so they are easy to find in letters/."


LETTERS_TASK = SuiteTask(
    task=make_task(
        "fs-letters",
        """Fill the payment reminder template templates/reminder.txt for every contact in
        contacts.csv (a CSV with a header; fields may be quoted). For each row create
        letters/<id>.txt, where <id> is the row's id, containing the template with every
        placeholder {{name}}, {{company}}, {{invoice}}, {{amount}} and {{due_date}} replaced by
        that row's value, and nothing else changed. Create the letters/ folder; it must contain
        only these letters. Do not modify the template or contacts.csv.""",
    ),
    kind="template",
    build_initial=lambda folder: write_tree(
        folder, {"templates/reminder.txt": TEMPLATE, "contacts.csv": CONTACTS}
    ),
    verifier=_letters_verifier(),
    checks="letters/<id>.txt per contact, all placeholders filled, nothing extra; inputs intact",
    policies=[
        AgentPolicy("planner", "planner", letters_planner, "PASS", note="direct and checked"),
        AgentPolicy("explorer", "explorer", letters_explorer, "PASS", note="ENOENT, then mkdir"),
        AgentPolicy("five", "hasty", letters_partial, "FAIL", "partial", "5 of 9 letters"),
        AgentPolicy("by-name", "one-shot", letters_by_name, "FAIL", "wrong-target", "names files"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-readme-assemble: sections/*.md in the order of order.txt -> README.md
# ---------------------------------------------------------------------------------------------

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


def _readme_verifier() -> str:
    sources = {f"sections/{name}": text for name, text in SECTIONS.items()}
    sources["order.txt"] = "\n".join(ORDER) + "\n"
    body = """
ok &= unchanged(root, SOURCES, "sections/ and order.txt")
text = read(root / "README.md")
if not report(text is not None, "README.md exists"):
    return False
positions = []
for name in ORDER:
    part = SOURCES["sections/" + name].rstrip("\\n")
    positions.append(text.find(part))
    ok &= report(part in text, "contains sections/" + name)
ok &= report(positions == sorted(positions), "sections in the order of order.txt")
for name in UNLISTED:
    first = SOURCES["sections/" + name].splitlines()[0]
    ok &= report(first not in text, "leaves out sections/" + name)
ok &= report(text == EXPECTED, "exactly the sections joined by one blank line, final newline")
"""
    return verifier(
        "fs-readme-assemble",
        "Checks that README.md is exactly the sections listed in order.txt, in that order, each "
        "without trailing newlines, joined by one blank line and ending with a newline; unlisted "
        "sections absent; sections and order.txt unchanged.",
        body,
        SOURCES=sources,
        ORDER=ORDER,
        UNLISTED=sorted(set(SECTIONS) - set(ORDER)),
        EXPECTED=_assemble(SECTIONS, ORDER),
    )


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


README_TASK = SuiteTask(
    task=make_task(
        "fs-readme-assemble",
        """Assemble README.md (replacing the current one) from the section files in sections/.
        order.txt lists, one per line, which section files to use and in which order; sections
        not listed there must not appear. README.md must be the listed sections' contents, each
        with its trailing newlines removed, joined by exactly one blank line, and ending with a
        single newline. Do not modify sections/ or order.txt.""",
    ),
    kind="template",
    build_initial=_readme_initial,
    verifier=_readme_verifier(),
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

# ---------------------------------------------------------------------------------------------
# fs-index-page: posts/*.md with front matter -> site/index.md (non-drafts, newest first)
# ---------------------------------------------------------------------------------------------

_POST_TITLES = [
    "Why we moved to Postgres",
    "A week of on-call",
    "Caching without tears",
    "Release 1.2 notes",
    "How we test migrations",
    "Hiring a second SRE",
    "Notes from PyCon",
    "Feature flags, revisited",
    "The cost of retries",
    "Draft: pricing experiments",
    "Our incident template",
    "Shipping on Fridays",
]


def _posts() -> dict[str, str]:
    generator = random.Random(9303)
    days = generator.sample(range(0, 400), len(_POST_TITLES))
    files: dict[str, str] = {}
    for title, offset in zip(_POST_TITLES, days, strict=True):
        day = date(2023, 1, 1) + timedelta(days=offset)
        slug = "-".join(title.lower().replace(",", "").replace(":", "").replace(".", "").split())
        draft = title.startswith("Draft") or generator.random() < 0.2
        files[f"posts/{slug}.md"] = (
            f"---\ntitle: {title}\ndate: {day.isoformat()}\ndraft: {str(draft).lower()}\n---\n\n"
            f"{title} - a few paragraphs follow.\n"
        )
    return files


POSTS = _posts()


def _front(text: str) -> dict[str, str]:
    header = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in header.splitlines() if ": " in line)


def _index(posts: dict[str, str], drafts: bool = False) -> str:
    entries = []
    for path, text in posts.items():
        meta = _front(text)
        if meta["draft"] == "true" and not drafts:
            continue
        entries.append(
            (meta["date"], f"- [{meta['title']}](../posts/{Path(path).name}) ({meta['date']})")
        )
    return "# Posts\n\n" + "\n".join(line for _, line in sorted(entries, reverse=True)) + "\n"


def _index_verifier() -> str:
    expected = _index(POSTS)
    body = """
ok &= unchanged(root, SOURCES, "posts/")
ok &= unchanged(root, {"site/style.css": STYLE}, "site/style.css")
text = read(root / "site" / "index.md")
if not report(text is not None, "site/index.md exists"):
    return False
lines = text.splitlines()
ok &= report(lines[:2] == ["# Posts", ""], "starts with '# Posts' and a blank line")
entries = [line for line in lines[2:] if line.strip()]
for want in ENTRIES:
    ok &= report(want in entries, "entry " + want)
extra = sorted(set(entries) - set(ENTRIES))
ok &= report(not extra, "no drafts or other lines " + str(extra[:3]))
ok &= report(entries == ENTRIES, "newest first")
ok &= report(text == EXPECTED, "no blank lines between entries, final newline")
"""
    return verifier(
        "fs-index-page",
        "Checks that site/index.md is '# Posts', a blank line, then one `- [title](../posts/"
        "file) (date)` line per non-draft post, newest first, final newline; posts unchanged.",
        body,
        SOURCES=POSTS,
        STYLE=STYLE,
        ENTRIES=expected.splitlines()[2:],
        EXPECTED=expected,
    )


STYLE = "body { font-family: sans-serif; max-width: 40em; margin: auto; }\n"


async def index_explorer(session: AgentSession) -> str:
    """Reads every post by itself, writes, reads back."""
    await session.call("list_allowed_directories")
    await session.call("list_directory", path=f"{session.root}/site")
    listing = await session.call("list_directory", path=f"{session.root}/posts")
    posts: dict[str, str] = {}
    for name in file_names(listing.text):
        content = await session.call("read_text_file", path=f"{session.root}/posts/{name}")
        posts[f"posts/{name}"] = content.text
    drafts = sum(_front(t)["draft"] == "true" for t in posts.values())
    session.think(f"{drafts} drafts to leave out; sort by date, newest first.")
    await session.call("write_file", path=f"{session.root}/site/index.md", content=_index(posts))
    await session.call("read_text_file", path=f"{session.root}/site/index.md")
    return f"site/index.md now lists the {len(posts) - drafts} published posts, newest first."


async def index_direct(session: AgentSession) -> str:
    """List, one read, write; hedges about relative links."""
    listing = await session.call("list_directory", path="posts")
    paths = [f"posts/{name}" for name in file_names(listing.text)]
    answer = await session.call("read_multiple_files", paths=paths)
    await session.call(
        "write_file", path="site/index.md", content=_index(split_multiple(answer.text, paths))
    )
    return (
        "site/index.md has the published posts. Links are relative (../posts/), not sure your "
        "site generator resolves them."
    )


async def index_drafts(session: AgentSession) -> str:
    """Includes the drafts."""
    listing = await session.call("list_directory", path=f"{session.root}/posts")
    paths = [f"{session.root}/posts/{name}" for name in file_names(listing.text)]
    answer = await session.call("read_multiple_files", paths=paths)
    posts = {
        p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[1]: t
        for p, t in split_multiple(answer.text, paths).items()
    }
    await session.call(
        "write_file", path=f"{session.root}/site/index.md", content=_index(posts, drafts=True)
    )
    await session.call("read_text_file", path=f"{session.root}/site/index.md", head=4)
    return "site/index.md lists every post, newest first; drafts are included so nothing gets lost."


async def index_claims(session: AgentSession) -> str:
    """Reads the posts, composes the page in its head, never writes it."""
    session.think("Plan: read all posts, drop drafts, sort by date, write site/index.md.")
    listing = await session.call("list_directory", path="posts")
    paths = [f"posts/{name}" for name in file_names(listing.text)]
    answer = await session.call("read_multiple_files", paths=paths)
    page = _index(split_multiple(answer.text, paths))
    await session.call("list_directory", path="site")
    await session.call("read_text_file", path="site/style.css")
    session.think("The page is:\n" + page)
    return f"site/index.md is ready with {len(page.splitlines()) - 2} posts, newest first."


INDEX_TASK = SuiteTask(
    task=make_task(
        "fs-index-page",
        """Generate the blog's index page site/index.md from the posts in posts/. Each post starts
        with front matter between --- lines giving title, date (YYYY-MM-DD) and draft
        (true/false). The page must be the line `# Posts`, a blank line, then one line per post
        that is not a draft, newest first, of the form `- [<title>](../posts/<file name>)
        (<date>)`, and end with a newline. Drafts must not appear. Do not modify posts/ or
        anything else in site/.""",
    ),
    kind="template",
    build_initial=lambda folder: write_tree(folder, {**POSTS, "site/style.css": STYLE}),
    verifier=_index_verifier(),
    checks="index.md heading, one link line per non-draft post, newest first; posts intact",
    policies=[
        AgentPolicy("explorer", "explorer", index_explorer, "PASS", note="reads post by post"),
        AgentPolicy("direct", "skeptic", index_direct, "PASS", note="three calls, hedged"),
        AgentPolicy("drafts", "hasty", index_drafts, "FAIL", "constraint", "includes drafts"),
        AgentPolicy("claims", "planner", index_claims, "FAIL", "false-claim", "never writes"),
    ],
)

TASKS = [LETTERS_TASK, README_TASK, INDEX_TASK]

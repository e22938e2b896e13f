"""fs-letters (template filling): a payment reminder template filled for every row of a
contacts CSV (some fields quoted) as letters/<id>.txt.
"""

from __future__ import annotations

import csv
import io
import random
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import files_under, main, unchanged
from suites.ds.tasks.filesystem.common import make_task, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-letters"

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


SOURCES = {"templates/reminder.txt": TEMPLATE, "contacts.csv": CONTACTS}
EXPECTED = {f"letters/{key}.txt": text for key, text in _letters(CONTACTS, TEMPLATE).items()}


def check(root: Path) -> bool:
    """Checks that letters/<id>.txt exists for every contact with the template's placeholders
    replaced by the contact's fields and nothing else changed, that letters/ holds nothing
    else, and that the template and contacts.csv are unchanged."""
    ok = unchanged(root, SOURCES, "templates/reminder.txt and contacts.csv")
    found = files_under(root, "letters")
    for name, text in sorted(EXPECTED.items()):
        ok &= report(found.get(name) == text, name + " filled from its contact row")
    leftover = sorted(name for name, text in found.items() if text is None or "{{" in text)
    ok &= report(not leftover, "no unfilled placeholders " + str(leftover[:5]))
    extra = sorted(set(found) - set(EXPECTED))
    ok &= report(not extra, "no other files in letters/ " + str(extra[:5]))
    return ok


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


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
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
    verifier=verify_script(TASK_ID, check, main),
    checks="letters/<id>.txt per contact, all placeholders filled, nothing extra; inputs intact",
    policies=[
        AgentPolicy("planner", "planner", letters_planner, "PASS", note="direct and checked"),
        AgentPolicy("explorer", "explorer", letters_explorer, "PASS", note="ENOENT, then mkdir"),
        AgentPolicy("five", "hasty", letters_partial, "FAIL", "partial", "5 of 9 letters"),
        AgentPolicy("by-name", "one-shot", letters_by_name, "FAIL", "wrong-target", "names files"),
    ],
)

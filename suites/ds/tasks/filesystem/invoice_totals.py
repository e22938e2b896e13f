"""fs-invoice-totals (content transformation): per-invoice totals from a folder of CSV invoices.

The tree holds 12 invoices (``invoices/INV-<n>.csv``: item, quantity, unit price) and a README.
The agent must write ``summary/totals.csv`` with one ``invoice_id,total`` row per invoice, sorted
by id, totals with two decimals, and leave the invoices untouched.
"""

from __future__ import annotations

import csv
import random
from decimal import Decimal
from pathlib import Path

from dataset.models import DirectoryTreeState, Task, VerifierRef
from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import main
from suites.ds.verify_script import verify_script

TASK_ID = "fs-invoice-totals"

COUNT = 12


def _invoices() -> dict[str, list[tuple[str, int, Decimal]]]:
    generator = random.Random(4101)
    items = ["paper", "toner", "stapler", "folders", "pens", "desk lamp", "cable", "mouse"]
    invoices: dict[str, list[tuple[str, int, Decimal]]] = {}
    for number in range(1, COUNT + 1):
        lines = []
        for _ in range(generator.randint(2, 6)):
            price = Decimal(generator.randint(150, 9900)) / 100
            lines.append((generator.choice(items), generator.randint(1, 9), price))
        invoices[f"INV-{1000 + number}"] = lines
    return invoices


INVOICES = _invoices()


def _csv(lines: list[tuple[str, int, Decimal]]) -> str:
    rows = ["item,quantity,unit_price"] + [
        f"{item},{qty},{price:.2f}" for item, qty, price in lines
    ]
    return "\n".join(rows) + "\n"


def _total(lines: list[tuple[str, int, Decimal]]) -> Decimal:
    return sum((qty * price for _, qty, price in lines), Decimal(0))


def build_initial(folder: Path) -> None:
    root = folder / "initial"
    (root / "invoices").mkdir(parents=True, exist_ok=True)
    (root / "summary").mkdir(exist_ok=True)
    (root / "summary" / "README.md").write_text("Summaries of the invoices go in this folder.\n")
    for invoice_id, lines in INVOICES.items():
        (root / "invoices" / f"{invoice_id}.csv").write_text(_csv(lines))
    (root / "README.md").write_text(
        "# Office supplies\n\nOne CSV per invoice in invoices/. Totals are quantity x unit price,"
        " summed over the lines.\n"
    )


def expected_totals() -> str:
    rows = ["invoice_id,total"] + [
        f"{invoice_id},{_total(lines):.2f}" for invoice_id, lines in sorted(INVOICES.items())
    ]
    return "\n".join(rows) + "\n"


EXPECTED_INVOICES = {invoice_id: _csv(lines) for invoice_id, lines in INVOICES.items()}


def check(root: Path) -> bool:
    """Checks that summary/totals.csv has the header invoice_id,total and one row per invoice in
    invoices/, sorted by invoice id, with the sum of quantity x unit price to two decimals; and
    that every invoice file is unchanged (same rows as it started with)."""
    ok = True
    for invoice_id, text in sorted(EXPECTED_INVOICES.items()):
        path = root / "invoices" / (invoice_id + ".csv")
        ok &= report(path.is_file() and path.read_text() == text, invoice_id + " unchanged")
    target = root / "summary" / "totals.csv"
    if not report(target.is_file(), "summary/totals.csv exists"):
        return False
    rows = list(csv.reader(target.read_text().splitlines()))
    ok &= report(bool(rows) and rows[0] == ["invoice_id", "total"], "header invoice_id,total")
    expected = []
    for invoice_id, text in sorted(EXPECTED_INVOICES.items()):
        lines = list(csv.DictReader(text.splitlines()))
        total = sum(Decimal(line["quantity"]) * Decimal(line["unit_price"]) for line in lines)
        expected.append([invoice_id, f"{total:.2f}"])
    body = [row for row in rows[1:] if row]
    ok &= report(len(body) == len(expected), f"{len(expected)} invoice rows (found {len(body)})")
    for want in expected:
        ok &= report(want in body, "row " + ",".join(want))
    ok &= report(body == expected, "rows sorted by invoice id")
    return ok


def _parse(text: str) -> list[tuple[int, Decimal]]:
    lines = [line for line in text.strip().splitlines()[1:] if line]
    return [(int(line.split(",")[1]), Decimal(line.split(",")[2])) for line in lines]


def _sum(text: str) -> Decimal:
    return sum((qty * price for qty, price in _parse(text)), Decimal(0))


async def careful(session: AgentSession) -> str:
    """Explores, makes a naming mistake, notices it and fixes it, verifies."""
    session.think("Start by looking at what is in the sandbox.")
    await session.call("list_allowed_directories")
    await session.call("list_directory", path=session.root)
    await session.call("read_text_file", path=f"{session.root}/README.md")
    listing = await session.call("list_directory", path=f"{session.root}/invoices")
    names = sorted(line.split(" ", 1)[1] for line in listing.text.splitlines())
    totals = {}
    for name in names:
        content = await session.call("read_text_file", path=f"{session.root}/invoices/{name}")
        totals[name.removesuffix(".csv")] = _sum(content.text)
    body = "".join(f"{key},{value:.2f}\n" for key, value in sorted(totals.items()))
    session.think("Write the summary.")
    await session.call(
        "write_file", path=f"{session.root}/summary/total.csv", content="invoice_id,total\n" + body
    )
    session.think("The task asked for totals.csv, not total.csv: rename it.")
    await session.call(
        "move_file",
        source=f"{session.root}/summary/total.csv",
        destination=f"{session.root}/summary/totals.csv",
    )
    await session.call("read_text_file", path=f"{session.root}/summary/totals.csv")
    return "summary/totals.csv now lists the total of each of the 12 invoices, sorted by id."


async def terse(session: AgentSession) -> str:
    """Reads everything at once, writes once; its final message undersells the result."""
    paths = [f"{session.root}/invoices/{key}.csv" for key in sorted(INVOICES)]
    await session.call("read_multiple_files", paths=paths)
    await session.call(
        "write_file", path=f"{session.root}/summary/totals.csv", content=expected_totals()
    )
    return "I wrote a totals file but could not double-check the arithmetic; please verify."


async def half_done(session: AgentSession) -> str:
    """Only handles the first half of the invoices, then claims success."""
    listing = await session.call("list_directory", path=f"{session.root}/invoices")
    names = sorted(line.split(" ", 1)[1] for line in listing.text.splitlines())[: COUNT // 2]
    rows = []
    for name in names:
        content = await session.call("read_text_file", path=f"{session.root}/invoices/{name}")
        rows.append(f"{name.removesuffix('.csv')},{_sum(content.text):.2f}\n")
    await session.call(
        "write_file",
        path=f"{session.root}/summary/totals.csv",
        content="invoice_id,total\n" + "".join(rows),
    )
    return "Done: summary/totals.csv contains the invoice totals."


async def tidy_up(session: AgentSession) -> str:
    """Writes the right totals but 'cleans' an invoice it should have left alone."""
    await session.call("list_directory", path=f"{session.root}/invoices")
    first = sorted(INVOICES)[0]
    content = await session.call("read_text_file", path=f"{session.root}/invoices/{first}.csv")
    session.think("The first invoice has a trailing line I do not like; drop it.")
    trimmed = "\n".join(content.text.strip().splitlines()[:-1]) + "\n"
    await session.call("write_file", path=f"{session.root}/invoices/{first}.csv", content=trimmed)
    await session.call(
        "write_file", path=f"{session.root}/summary/totals.csv", content=expected_totals()
    )
    return "All invoice totals are in summary/totals.csv, and I tidied the first invoice."


TASK = SuiteTask(
    task=Task(
        id=TASK_ID,
        domain="ds",
        subdomain="filesystem",
        instruction=(
            "The invoices/ folder holds one CSV per invoice (item, quantity, unit_price). "
            "Create summary/totals.csv with the header invoice_id,total and one row per "
            "invoice: its id (the file name without .csv) and its total, the sum of quantity "
            "times unit_price, with exactly two decimals. Sort the rows by invoice id. Do not "
            "modify the invoice files."
        ),
        initial_state=DirectoryTreeState(path="initial"),
        verifier=VerifierRef(),
    ),
    kind="content-transformation",
    build_initial=build_initial,
    verifier=verify_script(TASK_ID, check, main),
    checks="totals.csv header, one correct row per invoice, sorted; invoices unchanged",
    policies=[
        AgentPolicy("careful", "explorer", careful, "PASS", note="long, self-corrects a name"),
        AgentPolicy("terse", "one-shot", terse, "PASS", note="short, hedged final message"),
        AgentPolicy("half", "hasty", half_done, "FAIL", "partial", "half the invoices"),
        AgentPolicy("tidy", "overreacher", tidy_up, "FAIL", "constraint", "edits an invoice"),
    ],
)

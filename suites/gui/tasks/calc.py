"""The six Calc tasks: a total formula, filled formulas, a number format, bold headers on a
second sheet, values on a second sheet, and a corrected cell, each checked on the saved .xlsx."""

from __future__ import annotations

import openpyxl

from suites.ds.tasks.checks import report
from suites.gui.checks import close, sheet_bold, sheet_formats, sheet_values
from suites.gui.documents import workbook
from suites.gui.spec import SAVE_KEEP_FORMAT as SAVE
from suites.gui.spec import GuiPolicy, GuiTask, done, hotkey, press, type_text, wait
from suites.gui.tasks.records import gui_task

# -- a total over rows below the screen ---------------------------------------------------------

REGIONS = ["North", "South", "East", "West", "Central"]
UNITS = [(17 * i + 23) % 90 + 10 for i in range(60)]
"""Units of the 60 data rows (B2:B61): far more rows than one screen shows."""
UNIT_CELLS = [f"B{row}" for row in range(2, 62)]
TOTAL_CELL = "B62"
UNITS_TOTAL = float(sum(UNITS))


def check_total(path: str) -> bool:
    """B62 holds a formula whose saved result is the sum of all 60 units (B2:B61); the unit
    cells are unchanged."""
    stored = sheet_values(path, "Sales", [TOTAL_CELL], computed=False)[0]
    result = sheet_values(path, "Sales", [TOTAL_CELL], computed=True)[0]
    ok = report(
        isinstance(stored, str) and stored.startswith("="), f"B62 is a formula ({stored!r})"
    )
    ok = (
        report(close(result, UNITS_TOTAL), f"B62 shows {result}, the total is {UNITS_TOTAL}") and ok
    )
    units = sheet_values(path, "Sales", UNIT_CELLS, computed=True)
    same = all(close(a, float(b)) for a, b in zip(units, UNITS, strict=True))
    return report(same, "the unit cells are unchanged") and ok


def _to_total(reasoning: str) -> list:  # type: ignore[type-arg]
    return [
        hotkey(reasoning, "ctrl", "home"),
        press("Over to the Units column.", "right"),
        hotkey("Jump to the last unit.", "ctrl", "down"),
        press("One below: the empty cell for the total.", "down"),
    ]


TOTAL = GuiTask(
    task=gui_task(
        "gui-calc-total-units",
        "calc",
        "sales.xlsx",
        "In sales.xlsx, put a formula in B62 that adds up all the Units in column B (rows 2 to "
        "61), then save the file keeping the .xlsx format.",
        "formulas",
    ),
    document=lambda: workbook(
        {"Sales": [["Region", "Units"], *([REGIONS[i % 5], u] for i, u in enumerate(UNITS))]}
    ),
    check=check_total,
    checks="B62 is a formula whose saved result is the sum of all 60 rows; data unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_to_total("Start from A1."),
                type_text("Sum the whole column.", "=SUM(B2:B61)\n"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "B62 now holds =SUM(B2:B61) and sales.xlsx is saved.",
            note="jumps to the end of the column, sums B2:B61, saves",
        ),
        GuiPolicy(
            "screenful",
            "hasty",
            [
                *_to_total("Start from A1."),
                type_text("Sum the units I can see.", "=SUM(B2:B40)\n"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Added the total formula in B62 and saved the workbook.",
            failure="visible-rows-only",
            note="sums only B2:B40, the rows that were on screen",
        ),
        GuiPolicy(
            "fixed-range",
            "explorer",
            [
                *_to_total("Start from A1."),
                type_text("Sum the units.", "=SUM(B2:B40)\n"),
                press("The range stops at row 40 but the data goes to 61; back to B62.", "up"),
                type_text("Retype the formula over the whole column.", "=SUM(B2:B61)\n"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The total in B62 covers B2:B61 (my first range was too short; fixed). Saved.",
            space="pyautogui",
            messy=True,
            note="first sums too few rows, notices, retypes the full range, saves",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_to_total("Start from A1."),
                type_text("Sum the column.", "=SUM(B2:B61)\n"),
                done("Total shows."),
            ],
            "FAIL",
            "The total is in B62.",
            space="pyautogui",
            failure="not-saved",
            note="enters the right formula and never saves",
        ),
    ],
)

# -- fill a formula down ------------------------------------------------------------------------

ITEMS = [
    ("Bolts", 40, 0.25),
    ("Nuts", 55, 0.1),
    ("Washers", 80, 0.05),
    ("Hinges", 12, 3.5),
    ("Brackets", 20, 2.25),
    ("Screws", 150, 0.08),
    ("Anchors", 30, 0.4),
    ("Clamps", 8, 6.0),
]
LINE_CELLS = [f"D{row}" for row in range(2, 10)]
LINE_TOTALS = [float(qty * price) for _, qty, price in ITEMS]


def check_line_totals(path: str) -> bool:
    """D2:D9 each hold a formula whose saved result is Qty times Price of its row; the header
    D1 still reads 'Total'."""
    stored = sheet_values(path, "Order", LINE_CELLS, computed=False)
    results = sheet_values(path, "Order", LINE_CELLS, computed=True)
    formulas = [isinstance(v, str) and v.startswith("=") for v in stored]
    ok = report(all(formulas), f"D2:D9 are formulas ({stored})")
    right = [close(a, b) for a, b in zip(results, LINE_TOTALS, strict=True)]
    ok = report(all(right), f"D2:D9 show Qty*Price ({results})") and ok
    header = sheet_values(path, "Order", ["D1"], computed=False)[0]
    return report(header == "Total", f"D1 still reads Total ({header!r})") and ok


FILL = GuiTask(
    task=gui_task(
        "gui-calc-fill-line-totals",
        "calc",
        "order.xlsx",
        "In order.xlsx, fill D2:D9 (the Total column) with formulas that multiply each row's "
        "Qty by its Price, then save the file as .xlsx.",
        "filling formulas",
    ),
    document=lambda: workbook(
        {"Order": [["Item", "Qty", "Price", "Total"], *([n, q, p] for n, q, p in ITEMS)]}
    ),
    check=check_line_totals,
    checks="D2:D9 are formulas showing Qty*Price per row; header kept",
    policies=[
        GuiPolicy(
            "fill-down",
            "careful",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Over to the Total column.", "right", times=3),
                press("Down to D2.", "down"),
                type_text("First line total.", "=B2*C2\n"),
                press("Back up to D2.", "up"),
                hotkey("Extend the selection to D9.", "shift", "down", times=7),
                hotkey("Fill down.", "ctrl", "d"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "D2:D9 hold =B*C formulas for each row; saved.",
            space="pyautogui",
            note="types the first formula, fills it down D2:D9, saves",
        ),
        GuiPolicy(
            "typed",
            "careful",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Right.", "right"),
                press("Right.", "right"),
                press("Right to the Total column.", "right"),
                press("Down to D2.", "down"),
                type_text(
                    "Type each row's formula; Enter moves down.",
                    "".join(f"=B{r}*C{r}\n" for r in range(2, 10)),
                ),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Entered the eight line-total formulas and saved order.xlsx.",
            note="types the eight formulas one under the other, saves",
        ),
        GuiPolicy(
            "half-filled",
            "hasty",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Over to the Total column.", "right", times=3),
                press("Down to D2.", "down"),
                type_text("First line total.", "=B2*C2\n"),
                press("Back up to D2.", "up"),
                hotkey("Select down the column.", "shift", "down", times=3),
                hotkey("Fill down.", "ctrl", "d"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Total column is filled with the Qty*Price formulas and saved.",
            space="pyautogui",
            failure="partial",
            note="fills only D2:D5, saves",
        ),
        GuiPolicy(
            "fill-from-header",
            "hasty",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Right.", "right"),
                press("Right.", "right"),
                press("Right to the Total column.", "right"),
                press("Down to D2.", "down"),
                type_text("First line total.", "=B2*C2\n"),
                hotkey("Fill the formula down.", "ctrl", "d"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Filled the totals down the column and saved.",
            failure="silent-failure",
            note="ctrl+d on D3 alone copies D2 into D3 only; D4:D9 stay empty",
        ),
    ],
)

# -- percent format -----------------------------------------------------------------------------

TEAMS = [("Ana", 0.12, 0.1), ("Ben", 0.08, 0.1), ("Caro", 0.25, 0.2), ("Dev", 0.3, 0.3)]
TEAMS += [("Eli", 0.15, 0.2), ("Fay", 0.1, 0.1)]
SHARE_CELLS = [f"B{row}" for row in range(2, 8)]
TARGET_CELLS = [f"C{row}" for row in range(2, 8)]


def check_percent(path: str) -> bool:
    """B2:B7 have a percent number format and their values are unchanged; C2:C7 are not
    formatted as percentages."""
    formats = sheet_formats(path, "Shares", SHARE_CELLS)
    ok = report(all("%" in f for f in formats), f"B2:B7 are percentages ({formats})")
    values = sheet_values(path, "Shares", SHARE_CELLS, computed=True)
    same = all(close(v, t[1]) for v, t in zip(values, TEAMS, strict=True))
    ok = report(same, f"B2:B7 keep their values ({values})") and ok
    others = sheet_formats(path, "Shares", TARGET_CELLS)
    return report(not any("%" in f for f in others), f"C2:C7 unchanged ({others})") and ok


PERCENT = GuiTask(
    task=gui_task(
        "gui-calc-percent-shares",
        "calc",
        "shares.xlsx",
        "In shares.xlsx, format the Share values (B2:B7) as percentages without changing the "
        "values, and save the file in .xlsx format.",
        "number formats",
    ),
    document=lambda: workbook(
        {"Shares": [["Team", "Share", "Target"], *([n, s, t] for n, s, t in TEAMS)]}
    ),
    check=check_percent,
    checks="B2:B7 percent format with values kept; Target column untouched",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Right to Share.", "right"),
                press("Down to B2.", "down"),
                hotkey("Select to the last share.", "ctrl", "shift", "down"),
                hotkey("Percent format.", "ctrl", "shift", "5"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "B2:B7 are formatted as percentages and shares.xlsx is saved.",
            note="selects B2:B7, ctrl+shift+5, saves",
        ),
        GuiPolicy(
            "currency-first",
            "explorer",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Right to Share.", "right"),
                press("Down to B2.", "down"),
                hotkey("Select the shares.", "ctrl", "shift", "down"),
                hotkey("Apply the format.", "ctrl", "shift", "4"),
                hotkey("That is currency; use percent.", "ctrl", "shift", "5"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Shares now show as percentages (I briefly applied currency first). Saved.",
            space="pyautogui",
            messy=True,
            note="applies currency by mistake, then percent, saves",
        ),
        GuiPolicy(
            "target-column",
            "hasty",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Right to the share column.", "right", times=2),
                press("Down to the first value.", "down"),
                hotkey("Select the column's values.", "ctrl", "shift", "down"),
                hotkey("Percent format.", "ctrl", "shift", "5"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The share values are percentages now; file saved.",
            space="pyautogui",
            failure="wrong-target",
            note="formats the Target column instead of Share",
        ),
        GuiPolicy(
            "three-rows",
            "hasty",
            [
                hotkey("Start at A1.", "ctrl", "home"),
                press("Right to Share.", "right"),
                press("Down to B2.", "down"),
                hotkey("Extend the selection.", "shift", "down"),
                hotkey("Extend the selection.", "shift", "down"),
                hotkey("Percent format.", "ctrl", "shift", "5"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Formatted the shares as percentages and saved.",
            failure="partial",
            note="formats only B2:B4",
        ),
    ],
)

# -- bold headers on the second sheet -----------------------------------------------------------

JAN: list[list[object]] = [["Day", "Visitors", "Sales"], [1, 120, 830], [2, 95, 610], [3, 143, 990]]
FEB: list[list[object]] = [["Day", "Visitors", "Sales"], [1, 101, 700], [2, 132, 905], [3, 88, 540]]
HEADER_CELLS = ["A1", "B1", "C1"]
BODY_CELLS = ["A2", "B2", "C2"]


def check_feb_header(path: str) -> bool:
    """On sheet Feb, A1:C1 are bold and row 2 is not; on sheet Jan nothing is bold."""
    ok = report(all(sheet_bold(path, "Feb", HEADER_CELLS)), "Feb's header A1:C1 is bold")
    ok = report(not any(sheet_bold(path, "Feb", BODY_CELLS)), "Feb's row 2 is not bold") and ok
    jan = sheet_bold(path, "Jan", HEADER_CELLS + BODY_CELLS)
    return report(not any(jan), f"nothing on Jan is bold ({jan})") and ok


FEB_HEADER = GuiTask(
    task=gui_task(
        "gui-calc-bold-feb-header",
        "calc",
        "visits.xlsx",
        "visits.xlsx has two sheets, Jan and Feb. Make the header row of the Feb sheet (A1:C1) "
        "bold, leave the Jan sheet as it is, and save the file as .xlsx.",
        "sheets and cell formatting",
    ),
    document=lambda: workbook({"Jan": JAN, "Feb": FEB}),
    check=check_feb_header,
    checks="Feb!A1:C1 bold, Feb row 2 not, nothing on Jan bold",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Switch to the next sheet, Feb.", "ctrl", "pagedown"),
                hotkey("Go to A1.", "ctrl", "home"),
                hotkey("Select the header row's cells.", "ctrl", "shift", "right"),
                hotkey("Bold.", "ctrl", "b"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Feb's header row is bold; Jan untouched; saved.",
            note="switches to Feb, selects A1:C1, bolds, saves",
        ),
        GuiPolicy(
            "undo-on-jan",
            "explorer",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                hotkey("Select the header.", "ctrl", "shift", "right"),
                hotkey("Bold.", "ctrl", "b"),
                hotkey("This is the Jan sheet; undo.", "ctrl", "z"),
                hotkey("Switch to Feb.", "ctrl", "pagedown"),
                hotkey("Go to A1.", "ctrl", "home"),
                hotkey("Select the header.", "ctrl", "shift", "right"),
                hotkey("Bold.", "ctrl", "b"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Bolded Feb's header (undid the same change on Jan first) and saved.",
            space="pyautogui",
            messy=True,
            note="bolds Jan's header by mistake, undoes, does it on Feb, saves",
        ),
        GuiPolicy(
            "jan-sheet",
            "hasty",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                hotkey("Select the header.", "ctrl", "shift", "right"),
                hotkey("Bold.", "ctrl", "b"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The header row is bold and the file is saved.",
            space="pyautogui",
            failure="wrong-target",
            note="bolds the header of the sheet that was open (Jan)",
        ),
        GuiPolicy(
            "two-cells",
            "hasty",
            [
                hotkey("Switch to Feb.", "ctrl", "pagedown"),
                hotkey("Go to A1.", "ctrl", "home"),
                hotkey("Select the header.", "shift", "right"),
                hotkey("Bold.", "ctrl", "b"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Feb's header is now bold. Saved.",
            failure="partial",
            note="bolds A1:B1 only",
        ),
    ],
)

# -- values on the second sheet -----------------------------------------------------------------

SUMMARY: list[list[object]] = [["Quarter", "Revenue"], ["Q1", 1240], ["Q2", None]]
Q2: list[list[object]] = [["Month", "Revenue"], ["April", None], ["May", None], ["June", None]]
Q2_CELLS = ["B2", "B3", "B4"]
Q2_VALUES = [410.0, 385.0, 452.0]


def check_q2_values(path: str) -> bool:
    """On sheet Q2, B2:B4 hold 410, 385 and 452; sheet Summary's B2:B4 are unchanged."""
    values = sheet_values(path, "Q2", Q2_CELLS, computed=True)
    right = all(close(v, e) for v, e in zip(values, Q2_VALUES, strict=True))
    ok = report(right, f"Q2!B2:B4 hold 410, 385, 452 ({values})")
    summary = sheet_values(path, "Summary", Q2_CELLS, computed=True)
    return report(summary == [1240, None, None], f"Summary unchanged ({summary})") and ok


Q2_TASK = GuiTask(
    task=gui_task(
        "gui-calc-q2-revenue",
        "calc",
        "revenue.xlsx",
        "In revenue.xlsx, on the Q2 sheet, enter the monthly revenues 410 (April), 385 (May) "
        "and 452 (June) in B2:B4. Do not change the Summary sheet. Save as .xlsx.",
        "entering data on a sheet",
    ),
    document=lambda: workbook({"Summary": SUMMARY, "Q2": Q2}),
    check=check_q2_values,
    checks="Q2!B2:B4 = 410, 385, 452; Summary unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Switch to the Q2 sheet.", "ctrl", "pagedown"),
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Revenue.", "right"),
                press("Down to April.", "down"),
                type_text("Enter the three revenues.", "410\n385\n452\n"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Entered April-June revenues on Q2 and saved revenue.xlsx.",
            space="pyautogui",
            note="switches to Q2, types the three values down B2:B4, saves",
        ),
        GuiPolicy(
            "corrected",
            "explorer",
            [
                hotkey("Switch to the Q2 sheet.", "ctrl", "pagedown"),
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Revenue.", "right"),
                press("Down to April.", "down"),
                type_text("Enter the revenues.", "410\n358\n452\n"),
                press("Up.", "up"),
                press("May should be 385, not 358: up to B3.", "up"),
                type_text("Fix May.", "385\n"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Q2 has the three revenues (fixed a swapped digit in May); saved.",
            messy=True,
            note="mistypes May, goes back, fixes it, saves",
        ),
        GuiPolicy(
            "summary-sheet",
            "hasty",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Revenue.", "right"),
                press("Down.", "down"),
                type_text("Enter the revenues.", "410\n385\n452\n"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Q2 revenues are entered in B2:B4 and the file saved.",
            failure="wrong-target",
            note="types the values into the Summary sheet that was open",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                hotkey("Switch to the Q2 sheet.", "ctrl", "pagedown"),
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Revenue.", "right"),
                press("Down to April.", "down"),
                type_text("Enter the three revenues.", "410\n385\n452\n"),
                done("Entered."),
            ],
            "FAIL",
            "Revenues for April, May and June are in.",
            space="pyautogui",
            failure="not-saved",
            note="enters the right values and never saves",
        ),
    ],
)

# -- correct a cell -----------------------------------------------------------------------------

PRICES: list[list[object]] = [["Product", "Stock", "Price"], ["Lamp", 14, 24.5], ["Chair", 6, 89.0]]
PRICES += [["Desk", 3, 1999.0], ["Shelf", 9, 45.0], ["Rug", 4, 120.0]]
PRICE_CELLS = ["C2", "C3", "C4", "C5", "C6"]
FIXED_PRICES = [24.5, 89.0, 19.99, 45.0, 120.0]


def check_price(path: str) -> bool:
    """C4 (the desk's price) is 19.99; the other prices and the stock column are unchanged."""
    prices = sheet_values(path, "Stock", PRICE_CELLS, computed=True)
    right = all(close(v, e) for v, e in zip(prices, FIXED_PRICES, strict=True))
    ok = report(right, f"prices are {FIXED_PRICES} ({prices})")
    stock = sheet_values(path, "Stock", ["B2", "B3", "B4", "B5", "B6"], computed=True)
    return report(stock == [14, 6, 3, 9, 4], f"stock unchanged ({stock})") and ok


PRICE = GuiTask(
    task=gui_task(
        "gui-calc-fix-price",
        "calc",
        "stock.xlsx",
        "The desk's price in stock.xlsx (C4) was entered as 1999 instead of 19.99. Correct it "
        "to 19.99, change nothing else, and save the file as .xlsx.",
        "editing a cell",
    ),
    document=lambda: workbook({"Stock": PRICES}),
    check=check_price,
    checks="C4 = 19.99; other prices and stock unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Stock.", "right"),
                press("Right to Price.", "right"),
                press("Down.", "down"),
                press("Down.", "down"),
                press("Down to the desk's row.", "down"),
                type_text("Type the right price.", "19.99\n"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "C4 now reads 19.99; saved.",
            note="moves to C4, types 19.99 with Enter, saves",
        ),
        GuiPolicy(
            "overshoot",
            "explorer",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Price.", "right", times=2),
                press("Down to the desk's row.", "down", times=4),
                press("That is the shelf; up one.", "up"),
                type_text("Type the right price.", "19.99\n"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Corrected the desk price to 19.99 (went one row too far first). Saved.",
            space="pyautogui",
            messy=True,
            note="overshoots to the shelf row, comes back, fixes C4, saves",
        ),
        GuiPolicy(
            "escaped",
            "hasty",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Price.", "right", times=2),
                press("Down to the desk's row.", "down", times=3),
                type_text("Type the right price.", "19.99"),
                press("Leave the cell.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The desk's price is corrected to 19.99 and the file is saved.",
            space="pyautogui",
            failure="silent-failure",
            note="types 19.99 then Escape, which throws the entry away; saves the old value",
        ),
        GuiPolicy(
            "chair-row",
            "hasty",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                press("Right to Stock.", "right"),
                press("Right to Price.", "right"),
                press("Down.", "down"),
                press("Down to the desk.", "down"),
                type_text("Type the right price.", "19.99\n"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Fixed the desk's price (19.99) and saved stock.xlsx.",
            failure="wrong-target",
            note="overwrites the chair's price in C3 instead of C4",
        ),
    ],
)


# -- sort by name -------------------------------------------------------------------------------

STAFF: list[list[object]] = [
    ["Name", "Team", "Hours"],
    ["Marta", "Ops", 31],
    ["Dario", "Sales", 24],
    ["Yusuf", "Ops", 40],
    ["Bianca", "Design", 18],
    ["Kenji", "Sales", 36],
    ["Ines", "Design", 22],
    ["Tomas", "Ops", 28],
    ["Aleksa", "Sales", 33],
    ["Priya", "Design", 27],
    ["Hugo", "Ops", 15],
]
STAFF_CELLS = [f"{column}{row}" for row in range(1, 12) for column in "ABC"]


def check_sorted(path: str) -> bool:
    """On sheet Staff, the header row A1:C1 is unchanged; rows 2-11 are sorted by Name
    (ascending) and are exactly the original rows, each kept whole (name, team, hours)."""
    values = sheet_values(path, "Staff", STAFF_CELLS, computed=True)
    rows = [values[i : i + 3] for i in range(0, len(values), 3)]
    ok = report(rows[0] == STAFF[0], f"header unchanged ({rows[0]})")
    body = rows[1:]
    names = [row[0] for row in body]
    ok = (
        report(names == sorted(str(row[0]) for row in STAFF[1:]), f"names ascending ({names})")
        and ok
    )
    whole = sorted(map(tuple, body), key=str) == sorted(map(tuple, STAFF[1:]), key=str)
    return report(whole, "every row kept whole (name, team and hours together)") and ok


SORT = GuiTask(
    task=gui_task(
        "gui-calc-sort-names",
        "calc",
        "staff.xlsx",
        "In staff.xlsx, sort the table's rows by Name from A to Z, keeping each person's row "
        "together and the header row at the top, then save the file as .xlsx.",
        "sorting",
    ),
    document=lambda: workbook({"Staff": STAFF}),
    check=check_sorted,
    checks="rows 2-11 sorted by Name, each row intact; header unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Start inside the table at A1.", "ctrl", "home"),
                hotkey("Open the Data menu.", "alt", "d"),
                press("Its first entry, Sort..., is highlighted: open it.", "enter"),
                wait("The sort dialog."),
                press("Sort key 1 is Name, ascending: OK.", "enter"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Sorted the rows by Name (A to Z) and saved staff.xlsx.",
            note="opens Data > Sort, keeps the Name key ascending, saves",
        ),
        GuiPolicy(
            "names-only",
            "hasty",
            [
                hotkey("Go to A1.", "ctrl", "home"),
                press("Down to the first name.", "down"),
                hotkey("Select the names.", "ctrl", "shift", "down"),
                hotkey("Open the Data menu.", "alt", "d"),
                press("Down to Sort Ascending.", "down"),
                press("Sort ascending.", "enter"),
                press(
                    "Calc asks about the cells next to the names; move to 'Current selection'.",
                    "tab",
                ),
                press("Sort just these.", "enter"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The rows are sorted by Name and the file is saved.",
            space="pyautogui",
            failure="partial",
            note="sorts the Name column alone: the names no longer match their rows",
        ),
        GuiPolicy(
            "descending-undone",
            "explorer",
            [
                hotkey("Go to A1, in the Name column.", "ctrl", "home"),
                hotkey("Open the Data menu.", "alt", "d"),
                press("Down to a sort entry.", "down", times=2),
                press("Sort.", "enter"),
                hotkey("Yusuf is first: that sorted Z to A. Undo.", "ctrl", "z"),
                hotkey("Open the Data menu again.", "alt", "d"),
                press("Down to Sort Ascending.", "down"),
                press("Sort ascending by the Name column.", "enter"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The table is sorted by Name, A to Z (I sorted Z to A first and undid it). Saved.",
            space="pyautogui",
            messy=True,
            note="sorts descending by mistake, undoes, sorts ascending, saves",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                hotkey("Start inside the table at A1.", "ctrl", "home"),
                hotkey("Open the Data menu.", "alt", "d"),
                press("Open Sort....", "enter"),
                wait("The sort dialog."),
                press("Name, ascending: OK.", "enter"),
                done("Sorted."),
            ],
            "FAIL",
            "Sorted staff.xlsx by Name, A to Z.",
            failure="not-saved",
            note="sorts the rows correctly and never saves",
        ),
    ],
)

# -- a new sheet at the end ---------------------------------------------------------------------

COSTS: list[list[object]] = [["Item", "Cost"], ["Rent", 1200], ["Power", 310], ["Cleaning", 150]]
STOCK_TAKE: list[list[object]] = [["Shelf", "Count"], ["A", 42], ["B", 17]]
NEW_SHEET = "Review"
REVIEW_CELLS = ["A1", "B1", "A2", "B2"]
REVIEW_VALUES: list[object] = ["Checked by", "Lena", "Approved", "yes"]


def check_review_sheet(path: str) -> bool:
    """The workbook's sheets are Costs, Stock and Review, in that order; Review holds
    'Checked by' and 'Lena' in A1:B1 and 'Approved' and 'yes' in A2:B2; the Costs and Stock
    sheets are unchanged."""
    names = openpyxl.load_workbook(path).sheetnames
    ok = report(names == ["Costs", "Stock", NEW_SHEET], f"sheets in order ({names})")
    values = sheet_values(path, NEW_SHEET, REVIEW_CELLS, computed=True)
    ok = report(values == REVIEW_VALUES, f"Review A1:B2 ({values})") and ok
    costs = sheet_values(path, "Costs", ["A1", "B1", "B2", "B3", "B4", "C1", "A5"], computed=True)
    ok = (
        report(costs == ["Item", "Cost", 1200, 310, 150, None, None], f"Costs kept ({costs})")
        and ok
    )
    stock = sheet_values(path, "Stock", ["A1", "B1", "B2", "B3", "C1", "A4"], computed=True)
    return report(stock == ["Shelf", "Count", 42, 17, None, None], f"Stock kept ({stock})") and ok


def _append_sheet(reasoning: str) -> list:  # type: ignore[type-arg]
    return [
        hotkey(reasoning, "alt", "s"),
        press("Down to Insert Sheet at End....", "down", times=9),
        press("Open it.", "enter"),
    ]


def _review_values(reasoning: str) -> list:  # type: ignore[type-arg]
    return [type_text(reasoning, "Checked by\tLena\nApproved\tyes\n")]


NEW_SHEET_TASK = GuiTask(
    task=gui_task(
        "gui-calc-review-sheet",
        "calc",
        "costs.xlsx",
        f"Add a new sheet named '{NEW_SHEET}' at the end of costs.xlsx (after the Stock sheet). "
        "On it, put 'Checked by' in A1, 'Lena' in B1, 'Approved' in A2 and 'yes' in B2. Leave "
        "the other sheets as they are and save the file as .xlsx.",
        "new sheets",
    ),
    document=lambda: workbook({"Costs": COSTS, "Stock": STOCK_TAKE}),
    check=check_review_sheet,
    checks="sheets Costs, Stock, Review in order; Review A1:B2 filled; other sheets unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_append_sheet("Open the Sheet menu."),
                type_text("Name it Review.", f"{NEW_SHEET}\n"),
                *_review_values("The new sheet is open at A1; fill in the four cells."),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Added the Review sheet at the end with the four entries; costs.xlsx saved.",
            space="pyautogui",
            note="Sheet > Insert Sheet at End, names it Review, types the values, saves",
        ),
        GuiPolicy(
            "dialog-cancelled",
            "explorer",
            [
                hotkey("Open the Sheet menu.", "alt", "s"),
                press("Down to Insert Sheet....", "down", times=8),
                press("Open it.", "enter"),
                press("This dialog puts the sheet before the current one; cancel.", "escape"),
                *_append_sheet("Open the Sheet menu again."),
                type_text("Name it Review.", f"{NEW_SHEET}\n"),
                *_review_values("Fill in the four cells."),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Review is the last sheet and holds the four entries (I opened the other insert "
            "dialog first and cancelled it). Saved.",
            space="pyautogui",
            messy=True,
            note="opens Insert Sheet..., cancels, uses Insert Sheet at End, fills, saves",
        ),
        GuiPolicy(
            "positional",
            "hasty",
            [
                hotkey("Open the Sheet menu.", "alt", "s"),
                press("Down to Insert Sheet....", "down", times=8),
                press("Open it.", "enter"),
                press("Over to the Name field.", "tab", times=3),
                type_text("Name it Review and confirm.", f"{NEW_SHEET}\n"),
                *_review_values("Fill in the four cells."),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Review sheet is added with the four values, and the file is saved.",
            space="pyautogui",
            failure="wrong-target",
            note="inserts the sheet with the dialog's default position, before Costs",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_append_sheet("Open the Sheet menu."),
                type_text("Name it Review.", f"{NEW_SHEET}\n"),
                *_review_values("Fill in the four cells."),
                done("Entered."),
            ],
            "FAIL",
            "There is a Review sheet at the end with Checked by / Lena and Approved / yes.",
            space="pyautogui",
            failure="not-saved",
            note="adds and fills the sheet and never saves",
        ),
    ],
)

TASKS = [TOTAL, FILL, PERCENT, FEB_HEADER, Q2_TASK, PRICE, SORT, NEW_SHEET_TASK]
"""The Calc tasks, in build order."""

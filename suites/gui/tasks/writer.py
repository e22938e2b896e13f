"""The six Writer tasks: character and paragraph formatting, styles, adding, editing and
underlining text, each checked on the saved .docx."""

from __future__ import annotations

from suites.ds.tasks.checks import report
from suites.gui.checks import same_texts, word_paragraphs, word_table
from suites.gui.documents import Paragraph, word_document
from suites.gui.spec import SAVE_KEEP_FORMAT as SAVE
from suites.gui.spec import GuiPolicy, GuiTask, done, hotkey, press, type_text
from suites.gui.tasks.records import gui_task

CENTER = 1
"""python-docx's value of a centred paragraph."""

# -- bold title ---------------------------------------------------------------------------------

TITLE_TEXTS = [
    "Quarterly Operations Review",
    "Prepared by the planning office.",
    "Revenue grew in every region.",
    "Next steps are listed below.",
]


def check_bold_title(path: str) -> bool:
    """The first paragraph (the title) is bold in every run; the other paragraphs keep their
    texts and are not bold."""
    paragraphs = word_paragraphs(path)
    ok = same_texts([p["text"] for p in paragraphs], TITLE_TEXTS, "paragraph texts")
    ok = report(bool(paragraphs) and paragraphs[0]["bold"], "the title is bold throughout") and ok
    others = [p["text"] for p in paragraphs[1:] if p["any_bold"]]
    return report(not others, f"no other paragraph is bold ({others})") and ok


def _select_title(reasoning: str) -> list:  # type: ignore[type-arg]
    return [
        hotkey(reasoning, "ctrl", "home"),
        hotkey("Select the title line up to its end.", "shift", "end"),
    ]


BOLD_TITLE = GuiTask(
    task=gui_task(
        "gui-writer-bold-title",
        "writer",
        "review.docx",
        "Make the title of review.docx (its first paragraph, 'Quarterly Operations Review') "
        "bold, and save the document in its Word format.",
        "character formatting",
    ),
    document=lambda: word_document([Paragraph(text) for text in TITLE_TEXTS]),
    check=check_bold_title,
    checks="title bold in every run; other paragraphs unchanged and not bold",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_select_title("Go to the start of the document, where the title is."),
                hotkey("Make the selection bold.", "ctrl", "b"),
                *SAVE,
                done("The title is bold and the file is saved."),
            ],
            "PASS",
            "The title is now bold and review.docx is saved in Word format.",
            note="selects the title line, ctrl+b, saves keeping the format",
        ),
        GuiPolicy(
            "detour",
            "explorer",
            [
                hotkey("Look at the end of the document first.", "ctrl", "end"),
                *_select_title("The title is at the top; go back there."),
                hotkey("Apply the emphasis.", "ctrl", "i"),
                hotkey("That was italic, not bold: undo it.", "ctrl", "z"),
                hotkey("Now bold.", "ctrl", "b"),
                *SAVE,
                done("Bold applied, saved."),
            ],
            "PASS",
            "I made the title bold (after undoing an italic by mistake) and saved the file.",
            space="pyautogui",
            messy=True,
            note="wanders to the end, italicises by mistake, undoes, bolds, saves",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_select_title("The title is the first line."),
                hotkey("Bold it.", "ctrl", "b"),
                done("It shows in bold."),
            ],
            "FAIL",
            "Done: the title is bold.",
            failure="not-saved",
            note="bolds the title on screen and never saves",
        ),
        GuiPolicy(
            "first-word",
            "hasty",
            [
                hotkey("Go to the title.", "ctrl", "home"),
                hotkey("Select the title.", "ctrl", "shift", "right"),
                hotkey("Bold it.", "ctrl", "b"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The title is bold now and the document has been saved.",
            space="pyautogui",
            failure="partial",
            note="selects only the first word of the title, bolds it, saves",
        ),
    ],
)

# -- heading style ------------------------------------------------------------------------------

TRIAL_TEXTS = [
    "Field Trial Summary",
    "Methods",
    "Plots were sampled weekly.",
    "Results",
    "Yield rose by eight percent.",
    "Discussion",
    "Dry weeks explain the spread.",
]
RESULTS_INDEX = 3


def check_heading(path: str) -> bool:
    """The paragraph 'Results' has the Heading 1 style; no other paragraph is a heading; every
    text is unchanged."""
    paragraphs = word_paragraphs(path)
    ok = same_texts([p["text"] for p in paragraphs], TRIAL_TEXTS, "paragraph texts")
    styles = [p["style"] or "" for p in paragraphs]
    target = styles[RESULTS_INDEX] if len(styles) > RESULTS_INDEX else None
    ok = report(target == "Heading 1", f"'Results' has style Heading 1 (it has {target})") and ok
    others = [s for i, s in enumerate(styles) if i != RESULTS_INDEX and s.startswith("Heading")]
    return report(not others, f"no other paragraph is a heading ({others})") and ok


HEADING = GuiTask(
    task=gui_task(
        "gui-writer-heading-results",
        "writer",
        "trial.docx",
        "In trial.docx, give the paragraph 'Results' the paragraph style Heading 1. Leave the "
        "other paragraphs as they are and save the file as .docx.",
        "paragraph styles",
    ),
    document=lambda: word_document([Paragraph(text) for text in TRIAL_TEXTS]),
    check=check_heading,
    checks="'Results' is Heading 1; no other heading; texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Start at the top.", "ctrl", "home"),
                press("Down to 'Methods'.", "down"),
                press("Down to the methods text.", "down"),
                press("Down to 'Results'.", "down"),
                hotkey("Apply Heading 1 (ctrl+1).", "ctrl", "1"),
                *SAVE,
                done("Heading applied and saved."),
            ],
            "PASS",
            "'Results' now uses Heading 1 and the file is saved.",
            note="walks down to 'Results', ctrl+1, saves",
        ),
        GuiPolicy(
            "undo-level",
            "explorer",
            [
                hotkey("Start at the top.", "ctrl", "home"),
                press("Move down three lines to 'Results'.", "down", times=3),
                hotkey("Heading shortcut.", "ctrl", "2"),
                hotkey("That gave Heading 2; undo and use level 1.", "ctrl", "z"),
                hotkey("Heading 1.", "ctrl", "1"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Applied Heading 1 to 'Results' (I first picked level 2 and undid it) and saved.",
            space="pyautogui",
            messy=True,
            note="applies Heading 2, undoes, applies Heading 1, saves",
        ),
        GuiPolicy(
            "off-by-one",
            "hasty",
            [
                hotkey("Start at the top.", "ctrl", "home"),
                press("Move down to 'Results'.", "down", times=2),
                hotkey("Heading 1.", "ctrl", "1"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Results paragraph is formatted as Heading 1 and the document is saved.",
            space="pyautogui",
            failure="wrong-target",
            note="stops one line short and styles the methods sentence",
        ),
        GuiPolicy(
            "cancelled-save",
            "hasty",
            [
                hotkey("Start at the top.", "ctrl", "home"),
                press("Down to 'Methods'.", "down"),
                press("Down to the methods text.", "down"),
                press("Down to 'Results'.", "down"),
                hotkey("Heading 1.", "ctrl", "1"),
                hotkey("Save.", "ctrl", "s"),
                press("Close the format question.", "escape"),
                done("Saved."),
            ],
            "FAIL",
            "Heading 1 is applied to 'Results' and the file is saved.",
            failure="silent-failure",
            note="styles the right paragraph but Escape cancels the save",
        ),
    ],
)

# -- centre the closing line --------------------------------------------------------------------

CLOSING_TEXTS = [
    "Annual Volunteer Dinner",
    "The dinner starts at seven in the main hall.",
    "Please bring a dish to share.",
    "Parking is free after six.",
    "Thank you for your help this year.",
]


def check_centered(path: str) -> bool:
    """The last paragraph is centred; no other paragraph is; every text is unchanged."""
    paragraphs = word_paragraphs(path)
    ok = same_texts([p["text"] for p in paragraphs], CLOSING_TEXTS, "paragraph texts")
    last = paragraphs[-1]["alignment"] if paragraphs else None
    ok = report(last == CENTER, f"the last paragraph is centred (alignment {last})") and ok
    others = [p["text"] for p in paragraphs[:-1] if p["alignment"] == CENTER]
    return report(not others, f"no other paragraph is centred ({others})") and ok


CENTERED = GuiTask(
    task=gui_task(
        "gui-writer-center-closing",
        "writer",
        "dinner.docx",
        "Center the last paragraph of dinner.docx ('Thank you for your help this year.') and "
        "save it, keeping the .docx format.",
        "paragraph alignment",
    ),
    document=lambda: word_document([Paragraph(text) for text in CLOSING_TEXTS]),
    check=check_centered,
    checks="last paragraph centred; no other centred; texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("The closing line is the last paragraph.", "ctrl", "end"),
                hotkey("Center it.", "ctrl", "e"),
                *SAVE,
                done("Centred and saved."),
            ],
            "PASS",
            "The last paragraph is centred and dinner.docx is saved.",
            space="pyautogui",
            note="ctrl+end, ctrl+e, saves",
        ),
        GuiPolicy(
            "right-first",
            "explorer",
            [
                hotkey("Go to the closing line.", "ctrl", "end"),
                hotkey("Align it.", "ctrl", "r"),
                hotkey("That is right-aligned; center instead.", "ctrl", "e"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Centred the closing line (it was briefly right-aligned) and saved the document.",
            messy=True,
            note="right-aligns by mistake, then centres, saves",
        ),
        GuiPolicy(
            "line-above",
            "hasty",
            [
                hotkey("Go to the end.", "ctrl", "end"),
                press("Up to the closing paragraph.", "up"),
                hotkey("Center.", "ctrl", "e"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The closing paragraph is centred and the file saved.",
            failure="wrong-target",
            note="centres the paragraph above the last one",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                hotkey("Go to the end.", "ctrl", "end"),
                hotkey("Center.", "ctrl", "e"),
                done("Looks centred."),
            ],
            "FAIL",
            "Done, the last line is centred.",
            space="pyautogui",
            failure="not-saved",
            note="centres the right paragraph and never saves",
        ),
    ],
)

# -- append a signature -------------------------------------------------------------------------

MEMO_TEXTS = [
    "Budget Memo",
    "The travel budget is unchanged for next year.",
    "Training requests go to the team leads.",
]
SIGNATURE = "Approved by: R. Okafor"


def check_signature(path: str) -> bool:
    """A new last paragraph reads exactly 'Approved by: R. Okafor'; the earlier paragraphs are
    unchanged."""
    texts = [p["text"] for p in word_paragraphs(path)]
    return same_texts(texts, [*MEMO_TEXTS, SIGNATURE], "paragraph texts")


SIGNATURE_TASK = GuiTask(
    task=gui_task(
        "gui-writer-append-signature",
        "writer",
        "memo.docx",
        f"Add a new paragraph at the end of memo.docx that reads exactly '{SIGNATURE}', then "
        "save the document as .docx.",
        "adding text",
    ),
    document=lambda: word_document([Paragraph(text) for text in MEMO_TEXTS]),
    check=check_signature,
    checks="one new last paragraph with the exact text; the others unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Go to the end of the memo.", "ctrl", "end"),
                press("Start a new paragraph.", "enter"),
                type_text("Type the approval line.", SIGNATURE),
                *SAVE,
                done("Added and saved."),
            ],
            "PASS",
            "memo.docx ends with the approval line and is saved.",
            note="new paragraph at the end, types the line, saves",
        ),
        GuiPolicy(
            "retyped",
            "explorer",
            [
                hotkey("Go to the end of the memo.", "ctrl", "end"),
                press("New paragraph.", "enter"),
                type_text("Type the line.", "Approved by R Okafor"),
                hotkey("The punctuation is wrong; select the line to retype it.", "shift", "home"),
                type_text("Type it again, exactly.", SIGNATURE),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Added the approval line (retyped once to fix the punctuation) and saved.",
            space="pyautogui",
            messy=True,
            note="types the line wrong, selects it, retypes it, saves",
        ),
        GuiPolicy(
            "same-line",
            "hasty",
            [
                hotkey("Go to the end.", "ctrl", "end"),
                type_text("Type the approval line.", f" {SIGNATURE}"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The approval line has been added at the end and the memo saved.",
            space="pyautogui",
            failure="wrong-target",
            note="types the line onto the end of the last paragraph instead of a new one",
        ),
        GuiPolicy(
            "truncated",
            "hasty",
            [
                hotkey("Go to the end.", "ctrl", "end"),
                press("New paragraph.", "enter"),
                type_text("Type the approval line.", "Approved by:"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Added the approval line and saved memo.docx.",
            failure="partial",
            note="types only the start of the line, saves",
        ),
    ],
)

# -- edit a paragraph ---------------------------------------------------------------------------

STATUS_TEXTS = [
    "Contract 114",
    "Status: draft, pending review.",
    "Owner: facilities team.",
    "Renewal: every two years.",
]
STATUS = "Status: final, signed."


def check_status(path: str) -> bool:
    """The second paragraph reads exactly 'Status: final, signed.'; the others are unchanged."""
    texts = [p["text"] for p in word_paragraphs(path)]
    expected = [STATUS_TEXTS[0], STATUS, *STATUS_TEXTS[2:]]
    return same_texts(texts, expected, "paragraph texts")


STATUS_TASK = GuiTask(
    task=gui_task(
        "gui-writer-edit-status",
        "writer",
        "contract.docx",
        f"In contract.docx, change the second paragraph so that it reads exactly '{STATUS}' "
        "(replacing its current text) and save the file in Word format.",
        "editing text",
    ),
    document=lambda: word_document([Paragraph(text) for text in STATUS_TEXTS]),
    check=check_status,
    checks="second paragraph replaced exactly; others unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down to the status line.", "down"),
                hotkey("Select the whole line.", "shift", "end"),
                type_text("Replace it.", STATUS),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The status line now reads 'Status: final, signed.' and the file is saved.",
            space="pyautogui",
            note="selects the status line, types over it, saves",
        ),
        GuiPolicy(
            "overshoot",
            "explorer",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down.", "down"),
                press("Down again.", "down"),
                press("That is the owner line; back up one.", "up"),
                press("Start of the line.", "home"),
                hotkey("Select to its end.", "shift", "end"),
                type_text("Replace it.", STATUS),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Updated the status line and saved contract.docx.",
            messy=True,
            note="overshoots to the owner line, comes back, replaces the status line, saves",
        ),
        GuiPolicy(
            "owner-line",
            "hasty",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down to the status line.", "down", times=2),
                hotkey("Select the line.", "shift", "end"),
                type_text("Replace it.", STATUS),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The status paragraph is updated and saved.",
            space="pyautogui",
            failure="wrong-target",
            note="replaces the owner line instead of the status line",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down to the status line.", "down"),
                hotkey("Select the line.", "shift", "end"),
                type_text("Replace it.", STATUS),
                done("Text replaced."),
            ],
            "FAIL",
            "Done: the second paragraph now says 'Status: final, signed.'",
            failure="not-saved",
            note="replaces the right line and never saves",
        ),
    ],
)

# -- underline a paragraph ----------------------------------------------------------------------

SAFETY_TEXTS = [
    "Lab Safety Notes",
    "Goggles are required at every bench.",
    "Never leave a burner unattended.",
    "Report spills to the duty officer.",
]
WARNING_INDEX = 2


def check_underline(path: str) -> bool:
    """The third paragraph is underlined in every run; no other paragraph is underlined; texts
    are unchanged."""
    paragraphs = word_paragraphs(path)
    ok = same_texts([p["text"] for p in paragraphs], SAFETY_TEXTS, "paragraph texts")
    target = len(paragraphs) > WARNING_INDEX and paragraphs[WARNING_INDEX]["underline"]
    ok = report(target, "the third paragraph is underlined throughout") and ok
    others = [
        p["text"] for i, p in enumerate(paragraphs) if i != WARNING_INDEX and p["any_underline"]
    ]
    return report(not others, f"no other paragraph is underlined ({others})") and ok


UNDERLINE = GuiTask(
    task=gui_task(
        "gui-writer-underline-warning",
        "writer",
        "safety.docx",
        "Underline the whole third paragraph of safety.docx ('Never leave a burner "
        "unattended.') and save it as .docx.",
        "character formatting",
    ),
    document=lambda: word_document([Paragraph(text) for text in SAFETY_TEXTS]),
    check=check_underline,
    checks="third paragraph underlined in full; no other underline; texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Move down to the burner line.", "down", times=2),
                hotkey("Select it.", "shift", "end"),
                hotkey("Underline.", "ctrl", "u"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The burner warning is underlined and safety.docx is saved.",
            space="pyautogui",
            note="selects the third paragraph, ctrl+u, saves",
        ),
        GuiPolicy(
            "bold-undo",
            "explorer",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down.", "down"),
                press("Down to the burner line.", "down"),
                hotkey("Select it.", "shift", "end"),
                hotkey("Emphasise it.", "ctrl", "b"),
                hotkey("Bold is not what was asked; undo.", "ctrl", "z"),
                hotkey("Underline.", "ctrl", "u"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Underlined the third paragraph (undid a bold on the way) and saved the file.",
            messy=True,
            note="bolds by mistake, undoes, underlines, saves",
        ),
        GuiPolicy(
            "first-word",
            "hasty",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down.", "down"),
                press("Down to the burner line.", "down"),
                hotkey("Select the warning.", "ctrl", "shift", "right"),
                hotkey("Underline.", "ctrl", "u"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The warning is underlined and the document saved.",
            failure="partial",
            note="underlines only the first word of the paragraph, saves",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                hotkey("Top of the document.", "ctrl", "home"),
                press("Down to the burner line.", "down", times=2),
                hotkey("Select it.", "shift", "end"),
                hotkey("Underline.", "ctrl", "u"),
                done("Underlined."),
            ],
            "FAIL",
            "The third paragraph is underlined.",
            space="pyautogui",
            failure="not-saved",
            note="underlines the right paragraph and never saves",
        ),
    ],
)


# -- find and replace ---------------------------------------------------------------------------

OLD_WORD, NEW_WORD = "vendor", "supplier"
VISIT_TEXTS = [
    "Site Visit Notes",
    "The vendor delivered the pumps on Monday.",
    "Two crates were damaged, and the vendor will replace them.",
    "Invoices go to the finance desk, not to the site office.",
    "Next visit: confirm that the vendor has fixed the seals.",
]


def check_replaced(path: str) -> bool:
    """No paragraph contains 'vendor' any more (in any case); every occurrence became
    'supplier' and every other character of every paragraph is unchanged."""
    texts = [p["text"] for p in word_paragraphs(path)]
    left = [t for t in texts if OLD_WORD in t.lower()]
    ok = report(not left, f"no '{OLD_WORD}' left ({left})")
    expected = [t.replace(OLD_WORD, NEW_WORD) for t in VISIT_TEXTS]
    return same_texts(texts, expected, "paragraph texts") and ok


def _fill_replace(reasoning: str, replacement: str) -> list:  # type: ignore[type-arg]
    return [
        hotkey(reasoning, "ctrl", "h"),
        type_text("The word to find.", OLD_WORD),
        hotkey("To the Replace field (alt+p).", "alt", "p"),
        type_text("The replacement.", replacement),
    ]


REPLACE = GuiTask(
    task=gui_task(
        "gui-writer-replace-vendor",
        "writer",
        "visit.docx",
        f"In visit.docx, replace every occurrence of the word '{OLD_WORD}' with '{NEW_WORD}'. "
        "Change nothing else and save the document in Word format.",
        "find and replace",
    ),
    document=lambda: word_document([Paragraph(text) for text in VISIT_TEXTS]),
    check=check_replaced,
    checks="every 'vendor' replaced by 'supplier'; all other text unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_fill_replace("Open Find and Replace.", NEW_WORD),
                hotkey("Replace All (alt+l).", "alt", "l"),
                press("Close the dialog.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Replaced every 'vendor' with 'supplier' and saved visit.docx.",
            note="ctrl+h, fills both fields, Replace All, closes the dialog, saves",
        ),
        GuiPolicy(
            "typo-undone",
            "explorer",
            [
                *_fill_replace("Open Find and Replace.", "provider"),
                hotkey("Replace All.", "alt", "l"),
                press("Close the dialog.", "escape"),
                hotkey(
                    "The text says 'provider': the wrong word. Undo the replacement.", "ctrl", "z"
                ),
                hotkey("Open Find and Replace again.", "ctrl", "h"),
                hotkey("To the Replace field.", "alt", "p"),
                hotkey("Select its text.", "ctrl", "a"),
                type_text("Type the right word.", NEW_WORD),
                hotkey("Replace All.", "alt", "l"),
                press("Close the dialog.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Every 'vendor' now reads 'supplier' (I fixed a wrong first attempt). Saved.",
            space="pyautogui",
            messy=True,
            # The wrong word shares no first letter with the right one: the Replace field
            # completes what is typed from its history, and how far it has completed when a
            # screenshot is taken depends on timing.
            note="replaces with the wrong word, undoes, replaces again correctly, saves",
        ),
        GuiPolicy(
            "replace-once",
            "hasty",
            [
                *_fill_replace("Open Find and Replace.", NEW_WORD),
                hotkey("Replace.", "alt", "r"),
                hotkey("Replace.", "alt", "r"),
                press("Close the dialog.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "All occurrences of 'vendor' are replaced with 'supplier'; document saved.",
            space="pyautogui",
            failure="partial",
            note="presses Replace (one occurrence at a time) instead of Replace All",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_fill_replace("Open Find and Replace.", NEW_WORD),
                hotkey("Replace All.", "alt", "l"),
                press("Close the dialog.", "escape"),
                done("Replaced."),
            ],
            "FAIL",
            "Done: 'vendor' is replaced by 'supplier' throughout.",
            failure="not-saved",
            note="replaces every occurrence and never saves",
        ),
    ],
)

# -- a table cell -------------------------------------------------------------------------------

PARTS_TEXTS = ["Parts Order", "Quantities for the June delivery:", "Send the order by Friday."]
PARTS_TABLE = [["Part", "Qty"], ["Valve", "12"], ["Gasket", ""], ["Hose", ""], ["Clamp", "8"]]
GASKETS = "30"


def check_gasket_qty(path: str) -> bool:
    """In the document's table, the Qty cell of the Gasket row reads 30; every other cell is
    unchanged (the Hose row's Qty stays empty) and the paragraphs' texts are unchanged."""
    expected = [list(row) for row in PARTS_TABLE]
    expected[2][1] = GASKETS
    cells = word_table(path)
    ok = report(cells == expected, f"table cells {cells}")
    texts = [p["text"] for p in word_paragraphs(path)]
    return same_texts(texts, PARTS_TEXTS, "paragraph texts") and ok


def _to_qty_column(reasoning: str) -> list:  # type: ignore[type-arg]
    return [
        hotkey(reasoning, "ctrl", "home"),
        press("Down to the second paragraph.", "down"),
        press("Down into the table's first cell.", "down"),
        press("Next cell: the Qty header.", "tab"),
    ]


TABLE_CELL = GuiTask(
    task=gui_task(
        "gui-writer-table-gaskets",
        "writer",
        "parts.docx",
        f"In the table of parts.docx, enter {GASKETS} as the Qty of the Gasket row. Leave the "
        "rest of the table and the text as they are and save the document as .docx.",
        "tables",
    ),
    document=lambda: word_document(
        [Paragraph(text) for text in PARTS_TEXTS], table=PARTS_TABLE, table_after=2
    ),
    check=check_gasket_qty,
    checks="Gasket's Qty cell reads 30; every other cell and paragraph unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_to_qty_column("Start at the top."),
                press("Down to Valve's Qty.", "down"),
                press("Down to Gasket's Qty.", "down"),
                type_text("Enter the quantity.", GASKETS),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The Gasket row's Qty is 30 now; parts.docx saved.",
            note="walks into the table to the Gasket row's Qty cell, types 30, saves",
        ),
        GuiPolicy(
            "hose-undone",
            "explorer",
            [
                *_to_qty_column("Start at the top."),
                press("Down to the empty Qty cell.", "down", times=3),
                type_text("Enter the quantity.", GASKETS),
                hotkey("That was the Hose row, not Gasket: undo.", "ctrl", "z"),
                press("Up one row to Gasket.", "up"),
                type_text("Enter the quantity here.", GASKETS),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Gasket's Qty reads 30 (I typed it in the Hose row first and undid it). Saved.",
            space="pyautogui",
            messy=True,
            note="types 30 in the Hose row, undoes, types it in the Gasket row, saves",
        ),
        GuiPolicy(
            "hose-row",
            "hasty",
            [
                *_to_qty_column("Start at the top."),
                press("Down.", "down"),
                press("Down.", "down"),
                press("Down to the empty Qty cell.", "down"),
                type_text("Enter the quantity.", GASKETS),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Entered 30 as the Gasket quantity and saved parts.docx.",
            failure="wrong-target",
            note="types 30 into the Hose row's empty Qty cell, one row too low",
        ),
        GuiPolicy(
            "save-dismissed",
            "hasty",
            [
                *_to_qty_column("Start at the top."),
                press("Down to Valve's Qty.", "down"),
                press("Down to Gasket's Qty.", "down"),
                type_text("Enter the quantity.", GASKETS),
                hotkey("Save.", "ctrl", "s"),
                press("Dismiss the format question.", "escape"),
                done("Saved."),
            ],
            "FAIL",
            "Gasket's quantity is 30 and the document is saved.",
            failure="silent-failure",
            note="types 30 in the right cell; Escape on the keep-format question cancels the save",
        ),
    ],
)

TASKS = [BOLD_TITLE, HEADING, CENTERED, SIGNATURE_TASK, STATUS_TASK, UNDERLINE, REPLACE, TABLE_CELL]
"""The Writer tasks, in build order."""

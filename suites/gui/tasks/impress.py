"""The six Impress tasks: retitling slides, a bold text box, a new bullet, moving an element and
a new slide, each checked on the saved .pptx."""

from __future__ import annotations

from suites.ds.tasks.checks import report
from suites.gui.checks import slide_notes, slide_shapes, slide_texts
from suites.gui.documents import SlideSpec, presentation
from suites.gui.spec import SAVE_KEEP_FORMAT as SAVE
from suites.gui.spec import GuiPolicy, GuiTask, Move, done, hotkey, press, type_text
from suites.gui.tasks.records import gui_task

EMU_PER_CM = 360000

# -- the shared deck ----------------------------------------------------------------------------

HARBOR = [
    SlideSpec("Harbor Plan", ["Scope", "Timeline"]),
    SlideSpec("Budget", ["Capex", "Opex"]),
    SlideSpec("Risks", ["Weather", "Permits"]),
]
CALLOUT = "Call for volunteers"
BOX_LEFT, BOX_TOP = 914400, 5029200
BOX_CENTER_X = BOX_LEFT + 2743200 // 2
"""The text box's centre (LibreOffice shrinks an auto-growing box around its centre)."""


def harbor_deck() -> bytes:
    """The three-slide deck with the callout text box on slide 1."""
    return presentation(HARBOR, box=(CALLOUT, BOX_LEFT, BOX_TOP))


ORIGINAL_TEXTS = [
    ["Harbor Plan", "Scope\nTimeline", CALLOUT],
    ["Budget", "Capex\nOpex"],
    ["Risks", "Weather\nPermits"],
]


def _edit_title(reasoning: str) -> list[Move]:
    return [
        press(reasoning, "tab"),
        press("Edit its text.", "f2"),
        hotkey("Select all of it.", "ctrl", "a"),
    ]


LEAVE_EDIT = (
    press("Leave the text.", "escape"),
    press("Deselect.", "escape"),
)

# -- retitle the first slide --------------------------------------------------------------------

NEW_TITLE = "Harbor Renewal Plan"


def check_first_title(path: str) -> bool:
    """Slide 1's title reads exactly 'Harbor Renewal Plan'; every other text on every slide is
    unchanged and there are still three slides."""
    expected = [[NEW_TITLE, *ORIGINAL_TEXTS[0][1:]], *ORIGINAL_TEXTS[1:]]
    texts = slide_texts(path)
    return report(texts == expected, f"slide texts {texts}")


FIRST_TITLE = GuiTask(
    task=gui_task(
        "gui-impress-retitle-first",
        "impress",
        "harbor.pptx",
        f"Change the title of the first slide of harbor.pptx to '{NEW_TITLE}' and save the "
        "presentation in its PowerPoint format.",
        "editing slide text",
    ),
    document=harbor_deck,
    check=check_first_title,
    checks="slide 1 title replaced exactly; every other text unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_edit_title("Select the title placeholder of slide 1."),
                type_text("Type the new title.", NEW_TITLE),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Slide 1 is now titled 'Harbor Renewal Plan'; harbor.pptx is saved.",
            note="selects the title, replaces its text, saves",
        ),
        GuiPolicy(
            "second-look",
            "explorer",
            [
                press("Look at the next slide first.", "pagedown"),
                press("The title to change is on slide 1; go back.", "pageup"),
                *_edit_title("Select slide 1's title."),
                type_text("Type the new title.", NEW_TITLE),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Retitled the first slide (after a look at slide 2) and saved.",
            space="pyautogui",
            messy=True,
            note="visits slide 2, comes back, replaces the title, saves",
        ),
        GuiPolicy(
            "appended",
            "hasty",
            [
                press("Select the title.", "tab"),
                press("Edit it.", "f2"),
                type_text("Type the new title.", NEW_TITLE),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The first slide's title is 'Harbor Renewal Plan' now, and the file is saved.",
            space="pyautogui",
            failure="partial",
            note="types without selecting the old title: the new text is appended to it",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_edit_title("Select the title."),
                type_text("Type the new title.", NEW_TITLE),
                *LEAVE_EDIT,
                done("Title changed."),
            ],
            "FAIL",
            "Done: slide 1 reads 'Harbor Renewal Plan'.",
            failure="not-saved",
            note="replaces the title and never saves",
        ),
    ],
)

# -- bold the callout box -----------------------------------------------------------------------


def check_bold_callout(path: str) -> bool:
    """The text box 'Call for volunteers' on slide 1 is bold in every run; the titles and
    bodies are not bold; all texts unchanged."""
    slides = slide_shapes(path)
    texts = [[s["text"] for s in shapes if s["text"]] for shapes in slides]
    ok = report(texts == ORIGINAL_TEXTS, f"slide texts unchanged ({texts})")
    box = [s for shapes in slides for s in shapes if s["text"] == CALLOUT]
    ok = report(len(box) == 1 and box[0]["bold"], "the callout is bold throughout") and ok
    others = [s["text"] for shapes in slides for s in shapes if s["text"] != CALLOUT and s["bold"]]
    return report(not others, f"nothing else is bold ({others})") and ok


def _to_callout(reasoning: str) -> list[Move]:
    return [
        press(reasoning, "tab"),
        press("Next object: the body.", "tab"),
        press("Next object: the callout box.", "tab"),
    ]


CALLOUT_TASK = GuiTask(
    task=gui_task(
        "gui-impress-bold-callout",
        "impress",
        "harbor.pptx",
        f"On the first slide of harbor.pptx, make all of the text box '{CALLOUT}' bold. Change "
        "nothing else and save the file as .pptx.",
        "text boxes",
    ),
    document=harbor_deck,
    check=check_bold_callout,
    checks="callout box bold in full; titles and bodies not bold; texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_to_callout("Tab through the objects of slide 1 to the callout."),
                press("Edit its text.", "f2"),
                hotkey("Select all of it.", "ctrl", "a"),
                hotkey("Bold.", "ctrl", "b"),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The callout text box is bold and harbor.pptx is saved.",
            space="pyautogui",
            note="tabs to the text box, selects its text, bolds, saves",
        ),
        GuiPolicy(
            "title-first",
            "explorer",
            [
                press("Select an object.", "tab"),
                press("Edit.", "f2"),
                hotkey("Select its text.", "ctrl", "a"),
                hotkey("Bold.", "ctrl", "b"),
                hotkey("This is the title, not the callout: undo.", "ctrl", "z"),
                *LEAVE_EDIT,
                *_to_callout("Tab to the callout box."),
                press("Edit its text.", "f2"),
                hotkey("Select all.", "ctrl", "a"),
                hotkey("Bold.", "ctrl", "b"),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Bolded the callout box (I bolded the title first and undid it). Saved.",
            messy=True,
            note="bolds the title by mistake, undoes, bolds the callout, saves",
        ),
        GuiPolicy(
            "title-bold",
            "hasty",
            [
                press("Select the text box.", "tab"),
                press("Edit.", "f2"),
                hotkey("Select its text.", "ctrl", "a"),
                hotkey("Bold.", "ctrl", "b"),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The text box is bold and the presentation is saved.",
            failure="wrong-target",
            note="bolds the slide title (the first object) instead of the callout",
        ),
        GuiPolicy(
            "first-word",
            "hasty",
            [
                *_to_callout("Tab to the callout box."),
                press("Edit its text.", "f2"),
                press("Start of the text.", "home"),
                hotkey("Select the text.", "ctrl", "shift", "right"),
                hotkey("Bold.", "ctrl", "b"),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Made the callout bold and saved harbor.pptx.",
            space="pyautogui",
            failure="partial",
            note="bolds only the first word of the callout",
        ),
    ],
)

# -- add a bullet -------------------------------------------------------------------------------

NEW_BULLET = "Contingency"


def check_bullet(path: str) -> bool:
    """Slide 2's body lists Capex, Opex and then Contingency; every other text is unchanged."""
    expected = [ORIGINAL_TEXTS[0], ["Budget", f"Capex\nOpex\n{NEW_BULLET}"], ORIGINAL_TEXTS[2]]
    texts = slide_texts(path)
    return report(texts == expected, f"slide texts {texts}")


def _to_budget_body(reasoning: str) -> list[Move]:
    return [
        press(reasoning, "pagedown"),
        press("Select the title.", "tab"),
        press("Next: the body.", "tab"),
        press("Edit the body.", "f2"),
        hotkey("To the end of its text.", "ctrl", "end"),
    ]


BULLET = GuiTask(
    task=gui_task(
        "gui-impress-add-bullet",
        "impress",
        "harbor.pptx",
        f"In harbor.pptx, add a third bullet '{NEW_BULLET}' after 'Opex' on the Budget slide "
        "(slide 2) and save the file in PowerPoint format.",
        "slide content",
    ),
    document=harbor_deck,
    check=check_bullet,
    checks="slide 2 body gains the bullet at the end; every other text unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_to_budget_body("Go to slide 2."),
                press("New bullet.", "enter"),
                type_text("Type it.", NEW_BULLET),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Slide 2 now lists Capex, Opex, Contingency; saved.",
            note="edits slide 2's body at its end, adds the bullet, saves",
        ),
        GuiPolicy(
            "retyped",
            "explorer",
            [
                *_to_budget_body("Go to slide 2."),
                press("New bullet.", "enter"),
                type_text("Type it.", "Contingncy"),
                hotkey("Misspelt; select the bullet's text.", "shift", "home"),
                type_text("Retype it.", NEW_BULLET),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Added 'Contingency' under Opex (fixed a typo on the way) and saved.",
            space="pyautogui",
            messy=True,
            note="misspells the bullet, selects it, retypes, saves",
        ),
        GuiPolicy(
            "first-slide",
            "hasty",
            [
                press("Select the title.", "tab"),
                press("Next: the body.", "tab"),
                press("Edit the body.", "f2"),
                hotkey("To the end of its text.", "ctrl", "end"),
                press("New bullet.", "enter"),
                type_text("Type it.", NEW_BULLET),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Contingency bullet is added after Opex and the file saved.",
            space="pyautogui",
            failure="wrong-target",
            note="adds the bullet to slide 1's body instead of slide 2's",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_to_budget_body("Go to slide 2."),
                press("New bullet.", "enter"),
                type_text("Type it.", NEW_BULLET),
                *LEAVE_EDIT,
                done("Added."),
            ],
            "FAIL",
            "Contingency is now the third bullet on the Budget slide.",
            failure="not-saved",
            note="adds the bullet and never saves",
        ),
    ],
)

# -- move the callout ---------------------------------------------------------------------------

MIN_SHIFT = EMU_PER_CM
"""The box must move right by at least 1 cm."""
MAX_SHIFT = 6 * EMU_PER_CM
"""And by at most 6 cm (it stays on the slide)."""


def check_moved(path: str) -> bool:
    """The callout box on slide 1 moved right by 1 to 6 cm with its top unchanged (within
    1 mm); every text is unchanged."""
    slides = slide_shapes(path)
    texts = [[s["text"] for s in shapes if s["text"]] for shapes in slides]
    ok = report(texts == ORIGINAL_TEXTS, f"slide texts unchanged ({texts})")
    box = [s for s in slides[0] if s["text"] == CALLOUT] if slides else []
    if not box:
        return report(False, "the callout is on slide 1")
    shift = box[0]["left"] + box[0]["width"] // 2 - BOX_CENTER_X
    ok = (
        report(MIN_SHIFT <= shift <= MAX_SHIFT, f"moved right by {shift / EMU_PER_CM:.2f} cm")
        and ok
    )
    drop = abs(box[0]["top"] - BOX_TOP)
    return report(drop <= EMU_PER_CM // 10, f"top unchanged (moved {drop} EMU)") and ok


MOVE = GuiTask(
    task=gui_task(
        "gui-impress-move-callout",
        "impress",
        "harbor.pptx",
        f"On slide 1 of harbor.pptx, move the text box '{CALLOUT}' to the right by about 2 cm "
        "(between 1 and 6 cm) without moving it up or down, and save the file as .pptx.",
        "moving an element",
    ),
    document=harbor_deck,
    check=check_moved,
    checks="callout centre 1-6 cm further right, top within 1 mm; texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_to_callout("Tab to the callout box."),
                press("Nudge it right (1 mm a press), 2 cm in all.", "right", times=20),
                press("Deselect.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Moved the callout 2 cm to the right; harbor.pptx saved.",
            space="pyautogui",
            note="selects the box, 20 right-arrow nudges, saves",
        ),
        GuiPolicy(
            "overcorrected",
            "explorer",
            [
                *_to_callout("Tab to the callout box."),
                press("Nudge it right.", "right", times=30),
                press("A bit down too far? no, nudge it back left some.", "left", times=8),
                press("Deselect.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The callout sits about 2.2 cm further right now. Saved.",
            space="pyautogui",
            messy=True,
            note="moves 3 cm right, back 0.8 cm, saves",
        ),
        GuiPolicy(
            "moved-down",
            "hasty",
            [
                *_to_callout("Tab to the callout box."),
                press("Nudge it.", "down", times=20),
                press("Deselect.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "Moved the text box by 2 cm and saved.",
            space="pyautogui",
            failure="wrong-target",
            note="moves the box down instead of right",
        ),
        GuiPolicy(
            "one-nudge",
            "hasty",
            [
                *_to_callout("Tab to the callout box."),
                press("Nudge it right.", "right"),
                press("Nudge it right.", "right"),
                press("Deselect.", "escape"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The callout is moved to the right and the file is saved.",
            failure="partial",
            note="moves the box only 2 mm",
        ),
    ],
)

# -- a closing slide ----------------------------------------------------------------------------

CLOSING = "Questions"


def check_new_slide(path: str) -> bool:
    """A fourth slide at the end is titled 'Questions'; the first three slides' texts are
    unchanged."""
    texts = slide_texts(path)
    ok = report(texts[:3] == ORIGINAL_TEXTS, f"slides 1-3 unchanged ({texts[:3]})")
    return report(texts[3:] == [[CLOSING]], f"a last slide titled Questions ({texts[3:]})") and ok


def _new_slide_after(reasoning: str, pages: int) -> list[Move]:
    moves = [press(reasoning, "pagedown") for _ in range(pages)]
    return [
        *moves,
        hotkey("Insert a new slide after this one.", "ctrl", "m"),
        press("Select its title placeholder.", "tab"),
        press("Edit it.", "f2"),
        type_text("Type the title.", CLOSING),
    ]


NEW_SLIDE = GuiTask(
    task=gui_task(
        "gui-impress-closing-slide",
        "impress",
        "harbor.pptx",
        f"Add a new slide at the end of harbor.pptx (after 'Risks') whose title is '{CLOSING}', "
        "and save the presentation as .pptx.",
        "slides",
    ),
    document=harbor_deck,
    check=check_new_slide,
    checks="a 4th slide titled Questions at the end; slides 1-3 unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                *_new_slide_after("Go to the last slide.", 2),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Added a closing 'Questions' slide at the end and saved.",
            note="goes to slide 3, new slide, types the title, saves",
        ),
        GuiPolicy(
            "deleted-text",
            "explorer",
            [
                *_new_slide_after("Go to the last slide.", 2),
                type_text("Add a question mark.", "?"),
                press("No: the title should be exactly Questions.", "backspace"),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The deck ends with a 'Questions' slide (I removed a stray '?'). Saved.",
            messy=True,
            note="types an extra '?', deletes it, saves",
        ),
        GuiPolicy(
            "middle",
            "hasty",
            [
                *_new_slide_after("Go to the Budget slide.", 1),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "A Questions slide is added and the presentation saved.",
            space="pyautogui",
            failure="wrong-target",
            note="inserts the slide after slide 2, not at the end",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                *_new_slide_after("Go to the last slide.", 2),
                *LEAVE_EDIT,
                done("Added."),
            ],
            "FAIL",
            "There is a Questions slide at the end now.",
            space="pyautogui",
            failure="not-saved",
            note="adds the slide and never saves",
        ),
    ],
)

# -- retitle the third slide --------------------------------------------------------------------

RISKS_TITLE = "Risks and Mitigations"


def check_third_title(path: str) -> bool:
    """Slide 3's title reads exactly 'Risks and Mitigations'; every other text is unchanged."""
    expected = [*ORIGINAL_TEXTS[:2], [RISKS_TITLE, ORIGINAL_TEXTS[2][1]]]
    texts = slide_texts(path)
    return report(texts == expected, f"slide texts {texts}")


THIRD_TITLE = GuiTask(
    task=gui_task(
        "gui-impress-retitle-risks",
        "impress",
        "harbor.pptx",
        f"Rename the title of the third slide of harbor.pptx ('Risks') to '{RISKS_TITLE}' and "
        "save the presentation in PowerPoint format.",
        "editing slide text",
    ),
    document=harbor_deck,
    check=check_third_title,
    checks="slide 3 title replaced exactly; other texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                press("Next slide.", "pagedown", times=2),
                *_edit_title("On slide 3 now; select its title."),
                type_text("Type the new title.", RISKS_TITLE),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Slide 3 is titled 'Risks and Mitigations'; saved.",
            space="pyautogui",
            note="two pages down, replaces the title, saves",
        ),
        GuiPolicy(
            "went-back",
            "explorer",
            [
                press("Next slide.", "pagedown"),
                press("Next slide.", "pagedown"),
                press("Next slide.", "pagedown"),
                press("Nothing after Risks; back to it.", "pageup"),
                press("Hmm, this is Budget; forward one.", "pagedown"),
                *_edit_title("Select slide 3's title."),
                type_text("Type the new title.", RISKS_TITLE),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Renamed the Risks slide's title and saved harbor.pptx.",
            messy=True,
            note="pages past the end and back before retitling slide 3, saves",
        ),
        GuiPolicy(
            "budget-slide",
            "hasty",
            [
                press("Next slide.", "pagedown"),
                *_edit_title("Select the title."),
                type_text("Type the new title.", RISKS_TITLE),
                *LEAVE_EDIT,
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Risks slide is now titled 'Risks and Mitigations', and the file is saved.",
            failure="wrong-target",
            note="retitles slide 2 (Budget) instead of slide 3",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                press("Next slide.", "pagedown", times=2),
                *_edit_title("Select the title."),
                type_text("Type the new title.", RISKS_TITLE),
                *LEAVE_EDIT,
                done("Renamed."),
            ],
            "FAIL",
            "Done, slide 3's title is updated.",
            space="pyautogui",
            failure="not-saved",
            note="retitles slide 3 and never saves",
        ),
    ],
)


# -- move a slide to the end --------------------------------------------------------------------


def check_budget_last(path: str) -> bool:
    """The slides are, in order, Harbor Plan, Risks, Budget: the Budget slide moved to the end,
    every slide's texts unchanged and no slide added or lost."""
    texts = slide_texts(path)
    expected = [ORIGINAL_TEXTS[0], ORIGINAL_TEXTS[2], ORIGINAL_TEXTS[1]]
    titles = [slide[0] if slide else "" for slide in texts]
    ok = report(titles == ["Harbor Plan", "Risks", "Budget"], f"slide order {titles}")
    return report(texts == expected, f"every slide's texts unchanged ({texts})") and ok


SLIDE_ORDER = GuiTask(
    task=gui_task(
        "gui-impress-budget-last",
        "impress",
        "harbor.pptx",
        "In harbor.pptx, move the Budget slide (now slide 2) so that it becomes the last slide, "
        "after Risks. Keep the slides' contents as they are and save the file as .pptx.",
        "slide order",
    ),
    document=harbor_deck,
    check=check_budget_last,
    checks="slide order Harbor Plan, Risks, Budget; every slide's texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                press("Go to the Budget slide.", "pagedown"),
                hotkey("Slide > Move > Slide to End (shift+alt+end).", "shift", "alt", "end"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Budget is now the last slide, after Risks; harbor.pptx saved.",
            note="goes to slide 2, moves it to the end with shift+alt+end, saves",
        ),
        GuiPolicy(
            "menu-detour",
            "explorer",
            [
                press("Go to the Budget slide.", "pagedown"),
                press("Into the menu bar.", "f10"),
                press("Across to the Slide menu.", "right", times=5),
                press("Open it.", "down"),
                press("Up from the bottom to Navigate.", "up", times=4),
                press("Open Navigate.", "right"),
                press("Navigate only changes the slide shown; close it.", "left"),
                press("Up to Move.", "up"),
                press("Open Move.", "right"),
                press("Down to Slide to End.", "down", times=3),
                press("Move the slide to the end.", "enter"),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Moved the Budget slide to the end through Slide > Move (after a look at "
            "Navigate). Saved.",
            space="pyautogui",
            messy=True,
            note="opens the Navigate submenu first, backs out, Slide > Move > Slide to End, saves",
        ),
        GuiPolicy(
            "first-slide",
            "hasty",
            [
                hotkey("Move the slide to the end.", "shift", "alt", "end"),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The Budget slide is at the end now and the file is saved.",
            space="pyautogui",
            failure="wrong-target",
            note="moves the slide that was open (slide 1, Harbor Plan) to the end instead",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                press("Go to the Budget slide.", "pagedown"),
                hotkey("Move it to the end.", "shift", "alt", "end"),
                done("Moved."),
            ],
            "FAIL",
            "Budget comes after Risks now.",
            failure="not-saved",
            note="moves slide 2 to the end and never saves",
        ),
    ],
)

# -- speaker notes ------------------------------------------------------------------------------

NOTE = "Mention the grant deadline in May."


def check_budget_notes(path: str) -> bool:
    """Slide 2 (Budget) has the speaker notes 'Mention the grant deadline in May.' and the other
    slides have none; every slide's texts are unchanged."""
    notes = [text.strip() for text in slide_notes(path)]
    ok = report(notes == ["", NOTE, ""], f"speaker notes per slide {notes}")
    texts = slide_texts(path)
    return report(texts == ORIGINAL_TEXTS, f"slide texts unchanged ({texts})") and ok


def _notes_view(reasoning: str) -> list[Move]:
    return [
        hotkey(reasoning, "alt", "v"),
        press("Down to Outline.", "down"),
        press("Down to Notes.", "down"),
        press("Switch to the Notes view.", "enter"),
    ]


def _type_note(reasoning: str) -> list[Move]:
    return [
        press(reasoning, "tab"),
        press("Next object: the notes box.", "tab"),
        press("Edit it.", "f2"),
        type_text("Type the note.", NOTE),
        *LEAVE_EDIT,
    ]


def _normal_view(reasoning: str) -> list[Move]:
    return [
        hotkey(reasoning, "alt", "v"),
        press("Normal is the first entry.", "enter"),
    ]


NOTES = GuiTask(
    task=gui_task(
        "gui-impress-budget-notes",
        "impress",
        "harbor.pptx",
        f"Add the speaker note '{NOTE}' to the Budget slide (slide 2) of harbor.pptx. Change "
        "nothing on the slides themselves and save the file as .pptx.",
        "speaker notes",
    ),
    document=harbor_deck,
    check=check_budget_notes,
    checks="slide 2's notes hold the sentence, no other slide has notes; slide texts unchanged",
    policies=[
        GuiPolicy(
            "careful",
            "careful",
            [
                press("Go to the Budget slide.", "pagedown"),
                *_notes_view("Open the View menu."),
                *_type_note("Select the first object of the notes page."),
                *_normal_view("Back to the Normal view: View menu."),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "The Budget slide now has the speaker note about the grant deadline; saved.",
            note="slide 2, View > Notes, types the note in the notes box, Normal view, saves",
        ),
        GuiPolicy(
            "paged-in-notes",
            "explorer",
            [
                *_notes_view("Open the View menu."),
                press("These are the notes of slide 1, Harbor Plan; on to slide 2.", "pagedown"),
                *_type_note("On Budget's notes page; select its first object."),
                *_normal_view("Back to the Normal view."),
                *SAVE,
                done("Saved."),
            ],
            "PASS",
            "Added the note to the Budget slide (I opened slide 1's notes page first). Saved.",
            space="pyautogui",
            messy=True,
            note="opens the Notes view on slide 1, pages to slide 2, types the note, saves",
        ),
        GuiPolicy(
            "first-slide",
            "hasty",
            [
                *_notes_view("Open the View menu."),
                *_type_note("Select the first object of the notes page."),
                *_normal_view("Back to the Normal view."),
                *SAVE,
                done("Saved."),
            ],
            "FAIL",
            "The speaker note is on the Budget slide and the file is saved.",
            failure="wrong-target",
            note="types the note on slide 1's notes page (it never went to slide 2)",
        ),
        GuiPolicy(
            "unsaved",
            "hasty",
            [
                press("Go to the Budget slide.", "pagedown"),
                *_notes_view("Open the View menu."),
                *_type_note("Select the first object of the notes page."),
                *_normal_view("Back to the Normal view."),
                done("Added."),
            ],
            "FAIL",
            "Slide 2 has the note 'Mention the grant deadline in May.' now.",
            space="pyautogui",
            failure="not-saved",
            note="types the note on slide 2 and never saves",
        ),
    ],
)

TASKS = [FIRST_TITLE, CALLOUT_TASK, BULLET, MOVE, NEW_SLIDE, THIRD_TITLE, SLIDE_ORDER, NOTES]
"""The Impress tasks, in build order."""

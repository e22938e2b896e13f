"""What the GUI recorder stores: moves as actions of either space, screenshots as small palette
PNGs that replay still compares as the same screen, and trees reduced to what an agent reads."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

import suites.gui.recorder
from dataset.actions import Computer13Action, PyAutoGuiAction
from environments.desktop.kind import KIND
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.observations import linearize_tree, tree_nodes
from sandboxes.screens import compare_screens
from suites.gui.recorder import compress_screenshot, lasting_screen, shown_tree
from suites.gui.spec import hotkey, press, type_text, wait
from tests.sandboxes.desktop.helpers import start, wait_for_node, word_document

NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" '
    'xmlns:val="https://accessibility.ubuntu.example.org/ns/value"'
)
SHOWN = 'st:visible="true" st:showing="true" st:enabled="true"'
TREE = f"""<desktop-frame {NS} name="main" cp:screencoord="(0, 0)" cp:size="(1920, 1080)">
<application name="soffice"><frame {SHOWN} name="memo.docx" cp:screencoord="(0, 0)"
 cp:size="(1920, 1080)">
<panel {SHOWN} name="" cp:screencoord="(0, 0)" cp:size="(1920, 40)">
<push-button {SHOWN} name="Bold" attr:description="Bold (Ctrl+B)" cp:screencoord="(450, 50)"
 cp:size="(30, 30)" />
<push-button st:visible="true" st:showing="false" st:enabled="true" name="Hidden"
 cp:screencoord="(10, 10)" cp:size="(30, 30)" />
</panel>
<document-text {SHOWN} st:editable="true" name="" cp:screencoord="(390, 110)" cp:size="(620, 800)">
<paragraph {SHOWN} name="" cp:screencoord="(480, 180)" cp:size="(400, 20)">Budget Memo</paragraph>
<paragraph {SHOWN} name="" attr:class="body" cp:screencoord="(480, 210)" cp:size="(400, 20)"
>Two\tcolumns</paragraph>
<paragraph {SHOWN} name="" cp:screencoord="(480, 240)" cp:size="(0, 20)">Zero width</paragraph>
</document-text>
<combo-box {SHOWN} name="Font Name" val:value="Calibri" cp:screencoord="(200, 50)"
 cp:size="(150, 30)" />
</frame></application></desktop-frame>"""


def test_a_shown_tree_reads_exactly_like_the_full_one() -> None:
    shown = shown_tree(TREE)
    assert list(tree_nodes(shown)) == list(tree_nodes(TREE))
    assert linearize_tree(shown, token_budget=None) == linearize_tree(TREE, token_budget=None)
    names = [(node.tag, node.name, node.text) for node in tree_nodes(shown)]
    assert names == [
        ("push-button", "Bold", ""),
        ("paragraph", "", "Budget Memo"),
        ("paragraph", "", "Two\tcolumns"),
        ("combo-box", "Font Name", "Calibri"),
    ]
    # What no agent reads is gone: hidden and zero-sized nodes, containers.
    assert "Hidden" not in shown
    assert "Zero width" not in shown
    assert "<panel" not in shown
    assert len(shown) < len(TREE)


def _screen(text_at: tuple[int, int] | None) -> bytes:
    image = Image.new("RGB", (1920, 1080), (236, 236, 236))
    draw = ImageDraw.Draw(image)
    draw.rectangle((390, 110, 1010, 1000), fill=(255, 255, 255))
    for x in range(0, 1920, 40):
        draw.rectangle((x, 0, x + 30, 30), fill=(40 + x % 200, 90, 160))
    if text_at is not None:
        draw.rectangle((*text_at, text_at[0] + 200, text_at[1] + 16), fill=(20, 20, 20))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_compressed_screens_stay_the_same_screen_and_shrink() -> None:
    original = _screen((480, 180))
    small = compress_screenshot(original)
    with Image.open(io.BytesIO(small)) as image:
        assert image.mode == "P"
        assert image.size == (1920, 1080)
    assert len(small) < len(original)
    assert compare_screens(original, small).same
    # A change replay must notice still shows against the compressed record.
    assert not compare_screens(small, _screen((480, 400))).same


def test_moves_become_actions_of_either_space() -> None:
    bold = hotkey("Bold.", "ctrl", "b")
    assert bold.action("computer_13") == Computer13Action(
        action_type="HOTKEY", parameters={"keys": ["ctrl", "b"]}
    )
    assert bold.action("pyautogui") == PyAutoGuiAction(
        code="import pyautogui\npyautogui.hotkey('ctrl', 'b')"
    )
    typed = type_text("Type.", "a<b")
    assert typed.action("computer_13") == Computer13Action(
        action_type="TYPING", parameters={"text": "a<b"}
    )
    assert typed.action("pyautogui") == PyAutoGuiAction(
        code="import pyautogui\npyautogui.typewrite('a<b')"
    )
    many = press("Down.", "down", times=3)
    assert many.action("pyautogui") == PyAutoGuiAction(
        code="import pyautogui\npyautogui.press('down', presses=3)"
    )
    with pytest.raises(ValueError, match="computer_13 has no repeated PRESS"):
        many.action("computer_13")
    assert wait("Look.").action("pyautogui") == PyAutoGuiAction(code="WAIT")
    assert wait("Look.").action("computer_13") == Computer13Action(action_type="WAIT")


def test_generated_documents_carry_no_time_of_building() -> None:
    import zipfile

    from suites.gui.documents import FIXED_STAMP
    from suites.gui.tasks import all_tasks

    for gui_task in all_tasks():
        data = gui_task.document()
        assert data == gui_task.document(), gui_task.task.id
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            core = package.read("docProps/core.xml")
            assert all(info.date_time == (2026, 1, 5, 9, 0, 0) for info in package.infolist())
        assert b">" + FIXED_STAMP + b"</dcterms:modified>" in core, gui_task.task.id


def _paragraphs(tree: str) -> list[str]:
    return [node.text for node in tree_nodes(tree) if node.tag == "paragraph"]


@pytest.mark.desktop
async def test_a_step_is_recorded_where_its_screen_stays_not_where_it_first_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The action types one letter at once and another two seconds later: a pause long enough
    # for the executor's settling to take its look in between, as a busy desktop pauses. The
    # recorder's two agreeing looks are set further apart than that pause (the suite's 0.8 s
    # stand for a desktop's pauses in painting, far shorter than this staged one): the pause
    # then always falls between the looks, however soon the settled screen comes back.
    monkeypatch.setattr(suites.gui.recorder, "LASTING_SECONDS", 3.0)
    late = PyAutoGuiAction(
        code="import subprocess\n"
        "subprocess.Popen(['sh', '-c', 'xdotool type a; sleep 2; xdotool type b'],"
        " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,"
        " start_new_session=True)"
    )
    async with (
        LocalDesktopProvider() as provider,
        await start(provider, "late.docx", word_document("Written")) as desktop,
    ):
        await wait_for_node(desktop, tag="paragraph", text_contains="Written")
        performed = await KIND.perform_action(desktop, late, screenshot=True, tree=True)
        assert performed.accessibility_tree is not None
        assert _paragraphs(performed.accessibility_tree) == ["aWritten"]
        kept = await lasting_screen(KIND, desktop, performed, "step 1")
        assert kept.accessibility_tree is not None
        assert _paragraphs(kept.accessibility_tree) == ["abWritten"]
        assert kept.screenshot is not None

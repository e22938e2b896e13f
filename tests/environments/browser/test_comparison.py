"""The browser kind's answer comparison on the answers of a real run recorded through the real
Playwright MCP server (``../shared/real-formats/mcpmark-playwright``): the same page state in
another wording (this project's server's, another Playwright MCP version's, other element
numbers, quoting, wrappers, console noise) compares equal; another URL, title, tab or page text
does not."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import environments.browser
from environments.browser.comparison import (
    element_signature,
    normalise_browser_output,
    normalise_snapshot,
    page_facts,
    ref_for_signature,
)

RealFormat = Callable[[str], Path]
KIND = environments.browser.KIND


@pytest.fixture
def answers(real_format: RealFormat) -> list[str]:
    """Every recorded tool answer of the real runs, unwrapped from the SDK's double encoding."""
    texts = []
    for messages in sorted(real_format("mcpmark-playwright").rglob("messages.json")):
        for item in json.loads(messages.read_text(encoding="utf-8")):
            if item.get("type") == "function_call_output":
                inner = json.loads(json.loads(item["output"])["text"])
                texts.append("\n".join(block["text"] for block in inner["content"]))
    assert texts
    return texts


def _same(left: str, right: str) -> bool:
    return KIND.normalise_output(left, tool="browser_navigate") == KIND.normalise_output(
        right, tool="browser_navigate"
    )


def _url(answer: str) -> str:
    return answer.split("- Page URL: ", 1)[1].split("\n", 1)[0]


def _title(answer: str) -> str:
    return answer.split("- Page Title: ", 1)[1].split("\n", 1)[0]


def _snapshot(answer: str) -> str:
    return answer.split("```yaml\n", 1)[1].split("\n```", 1)[0]


def _renumbered(snapshot: str) -> str:
    """The snapshot with other element numbers, pointer marks, and one more wrapper around it."""
    shifted = re.sub(r"\[ref=e(\d+)\]", lambda m: f"[ref=e{int(m.group(1)) + 7}]", snapshot)
    shifted = re.sub(r'(- link "[^"]*")', r"\1 [cursor=pointer]", shifted)
    indented = "\n".join("  " + line for line in shifted.split("\n"))
    return f"- generic [active] [ref=e1]:\n{indented}"


def _our_wording(answer: str, snapshot: str | None = None) -> str:
    """The same page (or ``snapshot`` on it) as this project's browser server words it."""
    shown = _renumbered(_snapshot(answer) if snapshot is None else snapshot)
    return (
        f"### Done\nOpened {_url(answer)}\n### Page\n- URL: {_url(answer)}\n"
        f"- Title: {_title(answer)}\n### Snapshot\n```yaml\n{shown}\n```"
    )


def _newer_playwright_wording(answer: str) -> str:
    """The same page as Playwright MCP 0.0.4x words it: other headings, events after it."""
    return (
        f"### Page\n- Page URL: {_url(answer)}\n- Page Title: {_title(answer)}\n"
        "- Console: 1 errors, 0 warnings\n"
        f"### Snapshot\n```yaml\n{_renumbered(_snapshot(answer))}\n```\n"
        "### Events\n- [ERROR] Failed to load resource @ https://cdn.example/app.js:1\n"
        "### Ran Playwright code\n```js\nawait page.waitForTimeout(1000);\n```"
    )


def test_the_real_answers_are_read_down_to_their_page(answers: list[str]) -> None:
    for answer in answers:
        facts = page_facts(answer)
        assert facts.url == _url(answer)
        assert facts.title == _title(answer)
        assert facts.snapshot == _snapshot(answer)
        assert not facts.error
        normalised = KIND.normalise_output(answer, tool="browser_navigate")
        assert f"url: {_url(answer)}" in normalised
        assert f"title: {_title(answer)}" in normalised
        assert "[ref=" not in normalised
        assert "page.goto" not in normalised
        assert "getByRole" not in normalised


def test_the_same_page_in_another_wording_compares_equal(answers: list[str]) -> None:
    for answer in answers:
        assert _same(answer, _our_wording(answer)), answer
        assert _same(answer, _newer_playwright_wording(answer)), answer
        console = "### New console messages\n- [LOG] hydrated @ app.js:3\n\n"
        noisy = answer.replace("### Page state", console + "### Page state")
        assert _same(answer, noisy)
        spaced = answer.replace("```yaml\n", "```yaml\n\n").replace("\n", "  \r\n")
        assert _same(answer, spaced)


def test_a_changed_url_title_or_text_is_a_real_difference(answers: list[str]) -> None:
    for answer in answers:
        url, title, snapshot = _url(answer), _title(answer), _snapshot(answer)
        ours = _our_wording(answer)
        assert not _same(answer, ours.replace(f"- URL: {url}", f"- URL: {url}?page=2"))
        assert not _same(answer, ours.replace(f"- Title: {title}", f"- Title: {title} (2)"))
        words = re.findall(r"\w{2,}", re.sub(r"\[[^\]]*\]|/url: \S+", "", snapshot))
        assert words, snapshot
        changed = snapshot.replace(words[-1], words[-1] + "s", 1)
        assert not _same(answer, _our_wording(answer, changed)), words[-1]
        tabs = f"### Tabs\n- 0: [{title}]({url})\n- 1: (current) [Other](https://o.example/)\n"
        two_tabs = ours.replace("### Snapshot", tabs + "### Snapshot")
        assert not _same(answer, two_tabs)


def test_link_targets_levels_and_structure_count(answers: list[str]) -> None:
    linked = next(a for a in answers if "/url: " in a)
    assert not _same(linked, linked.replace("/url: https://", "/url: https://evil."))
    headed = next(a for a in answers if "[level=" in a)
    assert not _same(headed, re.sub(r"\[level=(\d)\]", "[level=9]", headed))
    # The link's target is its child: moved out of the link, it is another page.
    flat = re.sub(r"\n(\s+)- /url:", r"\n- /url:", linked)
    assert flat != linked
    assert not _same(linked, flat)


def test_errors_compare_by_being_errors() -> None:
    playwright = "### Result\nError: Ref e33 not found in the current page snapshot. Try again."
    newer = "### Error\nError: Ref e33 not found in the current page snapshot."
    ours = "Error: element 'Arvin Xu - GitHub link' (e33) is not on the current page; take a new"
    assert _same(playwright, ours)
    assert _same(newer, ours)
    page = "### Page state\n- Page URL: https://x.com/\n- Page Title: X\n"
    assert not _same(page, ours)


def test_yaml_quoting_and_spacing_do_not_count() -> None:
    playwright = '- \'link "Docs: intro" [ref=e3]\':\n  - /url: /docs\n- paragraph [ref=e4]: "2021"'
    ours = (
        '- link "Docs:   intro" [ref=e9] [cursor=pointer]:\n'
        "    - /url: /docs\n- paragraph [ref=e10]: 2021"
    )
    assert normalise_snapshot(playwright) == normalise_snapshot(ours)
    assert normalise_snapshot(playwright) != normalise_snapshot(ours.replace("2021", "2022"))


def test_a_recorded_reference_is_found_again_by_its_element() -> None:
    recorded = (
        '- link "Home" [ref=e3]\n- list [ref=e4]:\n  - link "Arvin Xu - GitHub" [ref=e33]\n'
        '  - link "Arvin Xu - GitHub" [ref=e34] [cursor=pointer]'
    )
    replayed = (
        '- generic [ref=e1]:\n  - link "Home" [ref=e2]\n  - list [ref=e5]:\n'
        '    - link "Arvin Xu - GitHub" [ref=e6]\n    - link "Arvin Xu - GitHub" [ref=e7]'
    )
    second = element_signature(recorded, "e34")
    assert second is not None
    assert ref_for_signature(replayed, second) == "e7"
    first = element_signature(recorded, "e33")
    assert first is not None
    assert ref_for_signature(replayed, first) == "e6"
    assert element_signature(recorded, "e99") is None
    assert ref_for_signature('- link "Other" [ref=e6]', first) is None


def test_normalise_browser_output_is_what_the_kind_uses(answers: list[str]) -> None:
    for answer in answers:
        assert KIND.normalise_output(answer, tool="browser_click") == normalise_browser_output(
            answer, tool="browser_click"
        )


def test_wrappers_are_not_content() -> None:
    recorded = '- text: "95 后 ..."\n- heading "Arvin Xu" [level=2] [ref=e10]'
    replayed = (
        "- generic [active] [ref=e1]:\n  - generic [ref=e2]: 95 后 ...\n"
        '  - generic [ref=e3]:\n    - heading "Arvin Xu" [level=2] [ref=e4]'
    )
    assert normalise_snapshot(recorded) == normalise_snapshot(replayed)
    # A named group or one with states is content, not a wrapper.
    assert normalise_snapshot(recorded) != normalise_snapshot(
        replayed.replace("- generic [ref=e2]", '- group "Bio" [ref=e2]')
    )


def test_an_untitled_page_is_the_same_with_or_without_its_title_line() -> None:
    newer = "### Page\n- Page URL: https://o.example/\n### Snapshot\n```yaml\n- text: hi\n```"
    ours = "### Page\n- URL: https://o.example/\n- Title: \n### Snapshot\n```yaml\n- text: hi\n```"
    assert _same(newer, ours)
    assert not _same(newer, ours.replace("- Title: ", "- Title: Hi"))

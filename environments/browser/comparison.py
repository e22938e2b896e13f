"""How the browser kind's recorded and replayed answers are compared: by the page they show.

A recording made through the real Playwright MCP server and a replay through this project's
browser server (``mcp_servers.browser``) word the same page differently. Playwright MCP answers
with ``### Ran Playwright code`` (the generated script), ``### Page state`` or ``### Page``
(``- Page URL:``, ``- Page Title:``, ``- Console: …``), ``- Page Snapshot:`` or ``### Snapshot``
with the YAML snapshot, ``### Open tabs``, ``### New console messages`` / ``### Events``,
``### Modal state``, ``### Downloads`` and ``### Result`` / ``### Error``, in an order that
changed between its versions; this project's server answers ``### Done``, ``### Page`` (``- URL:``,
``- Title:``, ``- HTTP status:``), ``### Tabs`` and ``### Snapshot``. Both are read down to the
facts of the page (``page_facts``) and written out in one form (``normalise_browser_output``):

- **Kept:** the page's URL and title; the open tabs (index, current, title, URL) when more than
  one is open; the accessibility snapshot's structure and text (roles, names, values, link
  targets, states such as ``[checked]`` or ``[level=2]``); whether the answer is an error.
- **Dropped:** the generated Playwright code and this server's action line (the call's
  arguments already say what was done), console messages and other events, download and modal
  notes, the HTTP status line, the console counts; in the snapshot, element references
  (``[ref=e12]``: numbered per snapshot), ``[cursor=…]`` and ``[active]`` (pointer and focus, not
  content), YAML quoting, runs of white space, and unnamed ``generic`` wrappers: one that carries
  no text goes (its children move up a level), one that holds only text becomes that ``text``
  (whether a run of text sits in its own ``<div>`` is the page's markup, not its content).
- **Errors:** an error answer becomes ``error`` only; the wording of the two servers' errors
  never matches, and the error flag is compared on its own (``environments.steps``).

Anything else that differs (another URL, title, tab or text on the page) still counts.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from environments.comparison import common_lines

ERROR_MARK = "error"
"""What an error answer becomes."""

NO_PAGE_MARK = "(no page state)"
"""What an answer that shows no page (a screenshot's) becomes, with its tabs if any."""

DROPPED_ATTRIBUTES = frozenset({"ref", "cursor", "active"})
"""Snapshot attributes that name or point at elements rather than describe content."""

_FENCE = re.compile(r"^```(\w*)\s*$")
_URL_LINE = re.compile(r"^- (?:Page )?URL: ?(.*)$")
_TITLE_LINE = re.compile(r"^- (?:Page )?Title: ?(.*)$")
_TAB_LINE = re.compile(r"^- (\d+):( \(current\))? \[(.*)\] ?\((.*)\)$")
_HEADING = re.compile(r"^#{2,4} (.*)$")
_ERROR_HEADINGS = ("Error",)
_SNAPSHOT_ITEM = re.compile(
    r"""^(?P<role>/?[A-Za-z][\w-]*)
        (?:\ "(?P<name>(?:[^"\\]|\\.)*)")?
        (?P<attributes>(?:\ \[[^\]]*\])*)
        (?::(?:\ (?P<value>.*))?)?$""",
    re.VERBOSE,
)
_ATTRIBUTE = re.compile(r"\[([^\]=]+)(?:=([^\]]*))?\]")
_REF_ATTRIBUTE = re.compile(r"\s*\[ref=[^\]]*\]")


@dataclass
class PageFacts:
    """What one browser answer says about the page, in either server's wording."""

    url: str | None = None
    """The current tab's address."""
    title: str | None = None
    """The current tab's title."""
    tabs: list[str] = field(default_factory=list)
    """The open tabs as ``index (current) [title](url)``, when the answer lists them."""
    snapshot: str | None = None
    """The accessibility snapshot (YAML), as the answer shows it."""
    error: bool = False
    """Whether the answer reports an error."""


def _outside_fences(lines: list[str]) -> tuple[list[str], list[str]]:
    """The lines outside code fences, and the body of each YAML fence (one string each)."""
    plain: list[str] = []
    yaml: list[str] = []
    fence: str | None = None
    fenced: list[str] = []
    for line in lines:
        if fence is not None:
            if line.strip() == "```":
                if fence == "yaml":
                    yaml.append("\n".join(fenced))
                fence = None
            else:
                fenced.append(line)
            continue
        opened = _FENCE.match(line.strip())
        if opened:
            fence, fenced = opened.group(1) or "text", []
        else:
            plain.append(line.strip())
    return plain, yaml


def page_facts(text: str) -> PageFacts:
    """The facts of one answer of either server (see the module docstring)."""
    facts = PageFacts()
    plain, yaml = _outside_fences(text.replace("\r\n", "\n").split("\n"))
    facts.snapshot = yaml[0] if yaml else None
    first = next((line for line in plain if line), "")
    facts.error = first.startswith(("Error:", "An error occurred"))
    section = ""
    for line in plain:
        heading = _HEADING.match(line)
        if heading:
            section = heading.group(1).strip()
            facts.error = facts.error or section in _ERROR_HEADINGS
            continue
        if section == "Result" and line.startswith("Error:"):
            facts.error = True
        url, title = _URL_LINE.match(line), _TITLE_LINE.match(line)
        if url and facts.url is None:
            facts.url = url.group(1).strip()
        if title and facts.title is None:
            facts.title = title.group(1).strip()
        tab = _TAB_LINE.match(line)
        if tab:
            current = " (current)" if tab.group(2) else ""
            facts.tabs.append(f"{tab.group(1)}{current} [{tab.group(3)}]({tab.group(4)})")
    return facts


def _unquote(value: str) -> str:
    """A YAML scalar without its quotes (Playwright quotes values that YAML would misread)."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            loaded = json.loads(value)
        except ValueError:
            return value
        return loaded if isinstance(loaded, str) else value
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def _spaces(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class SnapshotItem:
    """One item of a snapshot, without what ``DROPPED_ATTRIBUTES`` names and without quoting."""

    role: str
    """The role (``link``), ``text`` for bare text, or a property (``/url``)."""
    name: str | None
    """The accessible name, white space collapsed."""
    attributes: tuple[str, ...]
    """The kept attributes (``[level=2]``), sorted."""
    value: str | None
    """The text after the colon, white space collapsed."""

    @property
    def element(self) -> str:
        """Role, name and states: what tells the element apart, whatever it holds."""
        text = f"- {self.role}" + (f' "{self.name}"' if self.name is not None else "")
        return text + "".join(f" {attribute}" for attribute in self.attributes)

    @property
    def text(self) -> str:
        """The item's canonical line; an unnamed ``generic`` holding only text is that text."""
        if self.role == "generic" and self.name is None and not self.attributes and self.value:
            return f"- text: {self.value}"
        return self.element + (f": {self.value}" if self.value else "")

    @property
    def bare(self) -> bool:
        """An unnamed ``generic`` without text or kept attributes: a wrapper."""
        return self.role == "generic" and not (self.name or self.attributes or self.value)


def snapshot_item(content: str) -> SnapshotItem | None:
    """One snapshot line's item (``content`` without its ``- ``); None when it is not one."""
    if content.startswith("'"):
        end = 1
        while True:  # a single-quoted key: '' stands for one quote
            end = content.find("'", end)
            if end == -1 or content[end : end + 2] != "''":
                break
            end += 2
        if end != -1:
            key = content[1:end].replace("''", "'")
            rest = content[end + 1 :]
            value = rest[1:].strip() if rest.startswith(":") else ""
            content = key + (": " + value if value else "")
    found = _SNAPSHOT_ITEM.match(content)
    if not found:
        return None
    name = found.group("name")
    if name is not None:
        with contextlib.suppress(ValueError):
            name = json.loads(f'"{name}"')
        name = _spaces(name)
    kept = sorted(
        attribute.group(0)
        for attribute in _ATTRIBUTE.finditer(found.group("attributes") or "")
        if attribute.group(1) not in DROPPED_ATTRIBUTES
    )
    value = found.group("value")
    return SnapshotItem(
        role=found.group("role"),
        name=name,
        attributes=tuple(kept),
        value=_spaces(_unquote(value)) if value else None,
    )


def normalise_snapshot(snapshot: str) -> str:
    """A YAML page snapshot with only its content and structure left (see the module
    docstring): the same page snapshotted twice, by either server, gives the same text."""
    result: list[str] = []
    # Open items as (their indentation, whether they are kept): a child's depth is the number
    # of kept items above it.
    stack: list[tuple[int, bool]] = []
    for line in snapshot.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        content = line.strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        depth = sum(kept for _, kept in stack)
        parsed = snapshot_item(content[2:]) if content.startswith("- ") else None
        if parsed is None:
            text, bare = _spaces(_REF_ATTRIBUTE.sub("", content)), False
        else:
            text, bare = parsed.text, parsed.bare
        stack.append((indent, not bare))
        if not bare:
            result.append("  " * depth + text)
    return "\n".join(result)


def normalise_browser_output(
    text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
) -> str:
    """One answer (recorded or replayed, of either server) as its page facts, in one form."""
    facts = page_facts(common_lines(text, root))
    if facts.error:
        return ERROR_MARK
    lines: list[str] = []
    if facts.url is not None:
        # Playwright MCP 0.0.4x leaves out the title line of an untitled page; ours prints it.
        lines.append(f"url: {facts.url}")
        lines.append(f"title: {_spaces(facts.title or '')}")
    if len(facts.tabs) > 1:
        lines.append("tabs:")
        lines.extend(f"  {tab}" for tab in facts.tabs)
    if facts.snapshot is not None:
        lines.append("snapshot:")
        lines.append(normalise_snapshot(facts.snapshot))
    if facts.url is None and facts.snapshot is None:
        lines.insert(0, NO_PAGE_MARK)
    return "\n".join(lines)


# -- element references --------------------------------------------------------------------------


def element_signature(snapshot: str, ref: str) -> tuple[str, int] | None:
    """The element ``ref`` names in ``snapshot``, as a reference-free item (``- link "Docs"``)
    and which of the items that look the same it is (from 0); None when ``ref`` is not there."""
    items = _referenced_items(snapshot)
    for position, (item_ref, text) in enumerate(items):
        if item_ref == ref:
            same = sum(1 for _, other in items[:position] if other == text)
            return text, same
    return None


def ref_for_signature(snapshot: str, signature: tuple[str, int]) -> str | None:
    """The reference in ``snapshot`` of the element ``element_signature`` described, or None."""
    text, occurrence = signature
    seen = 0
    for item_ref, item_text in _referenced_items(snapshot):
        if item_text == text:
            if seen == occurrence:
                return item_ref
            seen += 1
    return None


_REF_VALUE = re.compile(r"\[ref=([^\]]+)\]")


def _referenced_items(snapshot: str) -> list[tuple[str, str]]:
    """Every snapshot item that carries a reference, as (reference, canonical item text)."""
    items: list[tuple[str, str]] = []
    for line in snapshot.split("\n"):
        content = line.strip()
        found = _REF_VALUE.search(content)
        if not found or not content.startswith("- "):
            continue
        parsed = snapshot_item(content[2:])
        # The value after the colon is content that may be cut or reflowed; the role, name
        # and states identify the element.
        text = parsed.element if parsed else _spaces(_REF_ATTRIBUTE.sub("", content))
        items.append((found.group(1), text))
    return items

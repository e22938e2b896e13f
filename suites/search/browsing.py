"""A scripted search agent's browser: calls go through a real MCP client to the browser server
of a sandbox over the suite's archive, and each call with its answer becomes a ``Step``.

``BrowsingSession`` records the calls (synthetic, deterministic times) and keeps the latest page
as a ``Page``: the accessibility snapshot the server printed, read back into what a policy needs
(links by name, the term/definition pairs of a fact box, table rows, list items, paragraphs).
Policies act only on what the snapshots show: a value a policy reports is read from a page it
opened, or is one it made up on purpose (a hallucinated source).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mcp import Client, types

from dataset.actions import ToolCallAction
from dataset.models import Observation, Step

__all__ = ["STEP_SECONDS", "BrowsingError", "BrowsingSession", "Page", "run_start"]

STEP_SECONDS = 6
"""Synthetic duration of one step."""

_LINE = re.compile(
    r"^(?P<indent>\s*)- (?P<role>[a-z]+)(?: \"(?P<name>(?:[^\"\\]|\\.)*)\")?(?P<rest>.*)$"
)
_QUOTED = re.compile(r"^(?P<indent>\s*)- '(?P<inner>.*)'(?P<colon>:?)$")
_REF = re.compile(r"\[ref=(?P<ref>[^\]]+)\]")
_URL = re.compile(r"^- URL: (?P<url>\S+)", re.MULTILINE)


class BrowsingError(RuntimeError):
    """A policy asked for something the page does not show (the suite's code is wrong)."""


@dataclass(frozen=True)
class _Node:
    depth: int
    role: str
    name: str
    ref: str | None
    value: str


def _nodes(snapshot: str) -> list[_Node]:
    nodes = []
    for raw in snapshot.splitlines():
        quoted = _QUOTED.match(raw)
        line = raw
        if quoted is not None:  # YAML single-quotes an entry holding ": "
            inner = quoted.group("inner").replace("''", "'")
            line = f"{quoted.group('indent')}- {inner}{quoted.group('colon')}"
        match = _LINE.match(line)
        if match is None:
            continue
        rest = match.group("rest")
        ref = _REF.search(rest)
        if "]:" in rest:
            value = rest.rsplit("]:", 1)[-1].strip()
        else:
            value = rest[1:].strip() if rest.startswith(":") else ""
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]  # YAML quotes a value that would read as a number
        nodes.append(
            _Node(
                depth=len(match.group("indent")) // 2,
                role=match.group("role"),
                name=(match.group("name") or "").replace('\\"', '"'),
                ref=ref.group("ref") if ref else None,
                value=value,
            )
        )
    return nodes


def _text_of(nodes: list[_Node], start: int) -> str:
    """The visible text of node ``start`` and its descendants."""
    first = nodes[start]
    parts = [first.name or first.value]
    for node in nodes[start + 1 :]:
        if node.depth <= first.depth:
            break
        if node.role in ("link", "text", "cell", "strong", "emphasis", "generic"):
            parts.append(node.name or node.value)
    return " ".join(part for part in parts if part).strip()


@dataclass
class Page:
    """The page shown by the latest tool answer."""

    url: str
    snapshot: str

    @property
    def nodes(self) -> list[_Node]:
        """The snapshot's elements in document order."""
        return _nodes(self.snapshot)

    def link(self, name: str) -> str:
        """The ref of the first link named ``name``."""
        for node in self.nodes:
            if node.role == "link" and node.name == name and node.ref:
                return node.ref
        raise BrowsingError(f"{self.url}: no link named {name!r}")

    def facts(self) -> dict[str, str]:
        """The page's term/definition pairs (its fact box)."""
        nodes = self.nodes
        found: dict[str, str] = {}
        for index, node in enumerate(nodes):
            if node.role == "term" and index + 1 < len(nodes):
                following = nodes[index + 1]
                if following.role == "definition":
                    found[node.value or node.name] = _text_of(nodes, index + 1)
        return found

    def table(self) -> list[list[str]]:
        """The body rows of the page's table, each a list of cell texts."""
        nodes = self.nodes
        rows: list[list[str]] = []
        for index, node in enumerate(nodes):
            if node.role != "row":
                continue
            cells = []
            for position in range(index + 1, len(nodes)):
                if nodes[position].depth <= node.depth:
                    break
                if nodes[position].role == "cell" and nodes[position].depth == node.depth + 1:
                    cells.append(_text_of(nodes, position))
            if cells:
                rows.append(cells)
        return rows

    def list_items(self) -> list[str]:
        """The texts of the page's list items, in order."""
        nodes = self.nodes
        return [_text_of(nodes, i) for i, node in enumerate(nodes) if node.role == "listitem"]

    def paragraphs(self) -> list[str]:
        """The texts of the page's paragraphs, in order."""
        nodes = self.nodes
        return [_text_of(nodes, i) for i, node in enumerate(nodes) if node.role == "paragraph"]


def run_start(sequence: int) -> datetime:
    """The synthetic start time of the ``sequence``-th recorded run."""
    return datetime(2026, 3, 21, 8, 0, tzinfo=UTC) + timedelta(minutes=11 * sequence)


class BrowsingSession:
    """Browser tools over one MCP client, recording each call as a step."""

    def __init__(self, client: Client, started: datetime) -> None:
        self.client = client
        self.steps: list[Step] = []
        self.page: Page | None = None
        self.opened: list[str] = []
        self._clock = started
        self._reasoning: str | None = None

    def think(self, text: str) -> None:
        """Reasoning recorded with the next call."""
        self._reasoning = text if self._reasoning is None else f"{self._reasoning} {text}"

    async def call(self, tool: str, /, **arguments: Any) -> str:
        """Call a browser tool; the call and its answer become the next step."""
        result = await self.client.call_tool(tool, dict(arguments))
        text = "".join(
            block.text for block in result.content if isinstance(block, types.TextContent)
        )
        if result.is_error:
            raise BrowsingError(f"{tool} {arguments}: {text}")
        urls = _URL.findall(text)
        url = urls[-1] if urls else None
        index = len(self.steps) + 1
        started = self._clock
        self._clock = started + timedelta(seconds=STEP_SECONDS)
        self.steps.append(
            Step(
                index=index,
                action=ToolCallAction(
                    name=tool, arguments=dict(arguments), call_id=f"call_{index:03d}"
                ),
                observation=Observation(text=text, url=url),
                reasoning=self._reasoning,
                started_at=started,
                ended_at=self._clock,
            )
        )
        self._reasoning = None
        if url is not None and "### Snapshot" in text:
            self.page = Page(url, text.split("### Snapshot", 1)[1])
            if url not in self.opened:
                self.opened.append(url)
        return text

    def current(self) -> Page:
        """The page the latest answer showed."""
        if self.page is None:
            raise BrowsingError("no page is open yet")
        return self.page

    async def open(self, url: str, why: str | None = None) -> Page:
        """Navigate to ``url``."""
        if why:
            self.think(why)
        await self.call("browser_navigate", url=url)
        return self.current()

    async def follow(self, name: str, why: str | None = None) -> Page:
        """Click the link named ``name`` on the current page."""
        if why:
            self.think(why)
        ref = self.current().link(name)
        await self.call("browser_click", element=f"link {name}", ref=ref)
        return self.current()

    @property
    def ended_at(self) -> datetime:
        """When the last recorded step ended."""
        return self._clock

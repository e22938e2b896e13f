"""An archive of the pages a recorded run visited, rebuilt from what its answers show.

There is no network here, so the pages of a run recorded through the real Playwright MCP server
cannot be fetched again. Each recorded answer shows the page's URL, title and accessibility
snapshot; this writes, per URL (the first answer showing it wins), an HTML page whose elements
are the snapshot's (a ``heading [level=2]`` an ``<h2>``, a ``link`` with its ``/url`` an
``<a href>``, ``text`` a text node, a ``generic`` a ``<div>``, other roles an element with that
``role`` and ``aria-label``), and stores them as ``response`` records of a WARC file: the form
``agentjudge archive`` writes. Replaying the run against it then checks the importer, the
replay and the comparison on the real answers, with the pages the agent saw.
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass, field
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from environments.browser.comparison import SnapshotItem, page_facts, snapshot_item


@dataclass
class _Node:
    item: SnapshotItem | None
    children: list[_Node] = field(default_factory=list)


def _tree(snapshot: str) -> _Node:
    root = _Node(None)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for line in snapshot.split("\n"):
        content = line.strip()
        if not content.startswith("- "):
            continue
        item = snapshot_item(content[2:])
        if item is None:
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        node = _Node(item)
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


_TAGS = {"paragraph": "p", "generic": "div", "button": "button", "list": "ul", "listitem": "li"}
"""Roles written as the HTML element that has them."""


def _element(node: _Node) -> str:
    item = node.item
    assert item is not None
    if item.role.startswith("/"):
        return ""  # a property of its parent (a link's /url)
    inner = html.escape(item.value or "") + "".join(_element(child) for child in node.children)
    name = html.escape(item.name or "")
    if item.role == "text":
        return inner
    if item.role == "heading":
        level = next(
            (a[len("[level=") : -1] for a in item.attributes if a.startswith("[level=")), "2"
        )
        tag, opening = f"h{level}", f"h{level}"
    elif item.role == "link":
        target = next(
            (c.item.value for c in node.children if c.item and c.item.role == "/url"), None
        )
        tag, opening = "a", f"a href='{html.escape(target or '#')}'"
    elif item.role in _TAGS:
        tag = opening = _TAGS[item.role]
    else:
        tag, opening = "div", f"div role='{html.escape(item.role)}' aria-label='{name}'"
        name = ""
    return f"<{opening}>{name}{inner}</{tag}>"


def page_html(title: str, snapshot: str) -> str:
    """An HTML page with ``title`` whose accessibility tree is ``snapshot``'s."""
    body = "".join(_element(child) for child in _tree(snapshot).children)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title></head><body>{body}</body></html>"
    )


def recorded_pages(answers: list[str]) -> dict[str, str]:
    """URL → rebuilt HTML of every page the answers show (the first answer of a URL wins)."""
    pages: dict[str, str] = {}
    for answer in answers:
        facts = page_facts(answer)
        if facts.url and facts.url not in pages and facts.snapshot is not None:
            pages[facts.url] = page_html(facts.title or "", facts.snapshot)
    return pages


def write_warc(pages: dict[str, str], output: Path) -> Path:
    """Store ``pages`` (URL → HTML) as ``response`` records of a gzipped WARC file."""
    with output.open("wb") as stream:
        writer = WARCWriter(stream, gzip=True)
        for url, text in pages.items():
            body = text.encode()
            headers = StatusAndHeaders(
                "200 OK",
                [
                    ("Content-Type", "text/html; charset=utf-8"),
                    ("Content-Length", str(len(body))),
                ],
                protocol="HTTP/1.1",
            )
            writer.write_record(
                writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=headers
                )
            )
    return output

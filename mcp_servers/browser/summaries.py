"""Page summaries by the judge's own model, asked for through MCP sampling.

Owns the optional step that shortens a long page snapshot before it goes back to the judge: when
a session's ``summarise_pages`` switch is on and a snapshot is longer than
``SUMMARY_THRESHOLD`` characters, the server asks its client to sample a message
(``sampling/createMessage``), that is, the judge's own model writes the summary, and the answer
says so. Every use is recorded on the session (``BrowserSession.summaries``) and marked in the
answer, so a verdict's tool calls show which pages the judge only saw summarised. A client that
cannot sample (a client of the newest protocol revision, which has no server-to-client
requests, or one that offers no sampling), or a failed summary, leaves the full snapshot with a
note.
"""

from __future__ import annotations

import warnings

from mcp import types
from mcp.shared.exceptions import MCPDeprecationWarning

from mcp_servers.serving import current_request
from sandboxes.browser.session import BrowserSession, PageSummary

SUMMARY_THRESHOLD = 6_000
"""Snapshots at most this long are never summarised."""

SUMMARY_MAX_TOKENS = 1_024
"""The longest summary the judge's model may write."""

SUMMARY_SYSTEM_PROMPT = (
    "You condense one web page for a reviewer who is checking facts against it. Keep, word for "
    "word, every number, date, name, table row and claim the page states, and note where the "
    "page contradicts itself. Keep the [ref=...] markers of links, buttons and form fields the "
    "reviewer may want to use. Drop navigation chrome, repeated boilerplate and decoration. "
    "Answer with the condensed page only."
)


async def summarise_snapshot(
    session: BrowserSession, url: str, title: str, snapshot: str
) -> tuple[str, str | None]:
    """The snapshot to show and a note for the answer: a summary by the client's model when
    the switch is on and the snapshot is long, else the snapshot unchanged (note None)."""
    if not session.summarise_pages or len(snapshot) <= SUMMARY_THRESHOLD:
        return snapshot, None
    request = current_request()
    if request is None:
        return snapshot, "not summarised: no client to ask"
    message = types.SamplingMessage(
        role="user",
        content=types.TextContent(
            type="text",
            text=f"Page: {title}\nAddress: {url}\n\nAccessibility snapshot:\n{snapshot}",
        ),
    )
    try:
        with warnings.catch_warnings():
            # Sampling is deprecated in the newest protocol revision; it is the one way a
            # server can reach its client's model, and clients opt in by offering it.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await request.session.create_message(
                [message], max_tokens=SUMMARY_MAX_TOKENS, system_prompt=SUMMARY_SYSTEM_PROMPT
            )
    except Exception as error:
        return snapshot, f"not summarised: the client could not sample ({_first_line(error)})"
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else ""
    if not text.strip():
        return snapshot, "not summarised: the summary came back empty"
    session.summaries.append(
        PageSummary(
            url=url, snapshot_chars=len(snapshot), summary_chars=len(text), model=result.model
        )
    )
    note = (
        f"summarised by the judge's model ({result.model}): {len(snapshot):,} characters of "
        f"snapshot shown as {len(text):,}"
    )
    return text, note


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__

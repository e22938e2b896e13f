"""The browser tools, named and shaped like Playwright MCP's, over one ``BrowserSession``.

Owns the tool table (``BROWSER_TOOLS``): ``browser_navigate``, ``browser_navigate_back``,
``browser_snapshot``, ``browser_click``, ``browser_type``, ``browser_press_key``,
``browser_select_option``, ``browser_hover``, ``browser_tabs``, ``browser_wait_for`` and
``browser_take_screenshot``, with Playwright MCP's parameter names (elements by ``ref`` from the
latest snapshot; ``target`` is accepted for it too, as newer versions call it), and the text
every answer ends with: the page's address, title, HTTP status when it is not 200, open tabs and
accessibility snapshot. Snapshots come from Playwright's own AI snapshot (``[ref=eN]`` markers);
a ref names the same element for as long as the page it was taken on is shown.

Only ``http``/``https`` addresses can be opened (no ``file:``, ``chrome:``, ``data:`` or
``javascript:``), no script can be run, and a screenshot's ``filename`` is never written: the
image comes back in the answer.

Every call has a deadline (``BrowserSession.call_deadline``, default ``CALL_DEADLINE_SECONDS``):
a page whose script never yields cannot hold a call, or the calls queued behind it, forever. A
call past its deadline, or one that fails, has the session close the tabs that stopped answering
or crashed (``BrowserSession.recover``) and says so; the next call finds a working browser.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field

from mcp_servers.browser.summaries import summarise_snapshot
from mcp_servers.results import ToolArguments, ToolImage, ToolResult, ToolSpec
from sandboxes.browser.session import ACTION_TIMEOUT_MS, BrowserSession, TabLimitError
from sandboxes.chromium import MAX_TABS

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

SNAPSHOT_LIMIT = 40_000
"""Characters of a page snapshot in one answer; the rest is cut with a notice."""

WAIT_LIMIT_SECONDS = 30.0
"""The longest ``browser_wait_for`` may wait (its time and its text together)."""

TITLE_SECONDS = 2.0
"""How long reading a page's title may take (it runs in the page)."""

REF_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""What an element reference looks like (``e12``; ``f1e3`` inside a frame)."""


class BrowserToolError(Exception):
    """A tool call that cannot be carried out (bad address, unknown ref); worded for the model."""


# -- argument models -----------------------------------------------------------------------------


class NoArguments(ToolArguments):
    """The tool takes no arguments."""


class NavigateArguments(ToolArguments):
    """Arguments of ``browser_navigate``."""

    url: str
    """The address to open (http or https)."""


class ElementArguments(ToolArguments):
    """An element of the latest snapshot."""

    element: str = ""
    """A human-readable description of the element (what the caller means to act on)."""
    ref: Annotated[str, Field(validation_alias=AliasChoices("ref", "target"))]
    """The element's reference from the latest page snapshot (``e12``)."""


class ClickArguments(ElementArguments):
    """Arguments of ``browser_click``."""

    doubleClick: bool = False  # noqa: N815 - Playwright MCP's parameter name
    """Double-click instead of a single click."""
    button: Literal["left", "right", "middle"] = "left"
    """The mouse button."""
    modifiers: list[Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]] = Field(
        default_factory=list
    )
    """Modifier keys held during the click."""


class TypeArguments(ElementArguments):
    """Arguments of ``browser_type``."""

    text: str
    """The text to type into the element."""
    submit: bool = False
    """Press Enter afterwards."""
    slowly: bool = False
    """Type one character at a time (for pages that react to each key)."""


class PressKeyArguments(ToolArguments):
    """Arguments of ``browser_press_key``."""

    key: Annotated[str, Field(min_length=1)]
    """The key (``ArrowLeft``, ``Enter``, ``a``, ``Control+a``)."""


class SelectOptionArguments(ElementArguments):
    """Arguments of ``browser_select_option``."""

    values: list[str]
    """The option values (or labels) to select."""


class TabsArguments(ToolArguments):
    """Arguments of ``browser_tabs``."""

    action: Literal["list", "new", "close", "select"]
    """List the tabs, open a new one, close one, or switch to one."""
    index: Annotated[int | None, Field(ge=0)] = None
    """The tab for ``close`` (default: the current one) and ``select``, counting from 0."""


class WaitForArguments(ToolArguments):
    """Arguments of ``browser_wait_for``."""

    time: Annotated[float | None, Field(ge=0)] = None
    """Seconds to wait."""
    text: str | None = None
    """Text to wait for until it appears."""
    textGone: str | None = None  # noqa: N815 - Playwright MCP's parameter name
    """Text to wait for until it disappears."""


class ScreenshotArguments(ToolArguments):
    """Arguments of ``browser_take_screenshot``."""

    type: Literal["png", "jpeg"] = "png"
    """The image format."""
    filename: str | None = None
    """Accepted for compatibility; nothing is written, the image comes back in the answer."""
    element: str | None = None
    """A description of the element to capture (with ``ref``)."""
    ref: Annotated[str | None, Field(validation_alias=AliasChoices("ref", "target"))] = None
    """Capture only this element of the latest snapshot."""
    fullPage: bool = False  # noqa: N815 - Playwright MCP's parameter name
    """Capture the whole scrollable page instead of the viewport."""


# -- page state ----------------------------------------------------------------------------------


async def page_snapshot(page: Page) -> str:
    """The page's accessibility snapshot with element references, capped."""
    text = await page.aria_snapshot(mode="ai", timeout=10_000)
    if len(text) > SNAPSHOT_LIMIT:
        cut = len(text) - SNAPSHOT_LIMIT
        text = text[:SNAPSHOT_LIMIT] + f"\n# ... {cut} more characters of the snapshot cut"
    return text


async def _title(page: Page) -> str:
    try:
        return await asyncio.wait_for(page.title(), TITLE_SECONDS)
    except Exception:
        return ""


async def page_state(session: BrowserSession, *, snapshot: bool = True) -> str:
    """The answer's closing block: address, title, status, tabs and (optionally) snapshot."""
    page = session.page
    lines = ["### Page", f"- URL: {page.url}", f"- Title: {await _title(page)}"]
    status = session.status_of(page)
    if status is not None and status != 200:
        note = " (not in the archive)" if status == 404 and _missed(session, page.url) else ""
        lines.append(f"- HTTP status: {status}{note}")
    tab_note = session.take_tab_note()
    if tab_note is not None:
        lines.append(f"- Note: {tab_note}")
    if len(session.tabs) > 1:
        lines.append("### Tabs")
        lines.extend([await _tab_line(session, index) for index in range(len(session.tabs))])
    if snapshot:
        shown, summary_note = await summarise_snapshot(
            session, page.url, await _title(page), await page_snapshot(page)
        )
        heading = "### Snapshot" + (f" ({summary_note})" if summary_note else "")
        lines += [heading, "```yaml", shown, "```"]
    return "\n".join(lines)


def _missed(session: BrowserSession, url: str) -> bool:
    return session.archive.lookup(url) is None


async def _tab_line(session: BrowserSession, index: int) -> str:
    page = session.tabs[index]
    marker = " (current)" if index == session.current else ""
    return f"- {index}:{marker} [{await _title(page)}]({page.url})"


def _done(action: str, state: str) -> ToolResult:
    return ToolResult(text=f"### Done\n{action}\n{state}")


# -- elements ------------------------------------------------------------------------------------


async def element(session: BrowserSession, ref: str | None, description: str = "") -> Locator:
    """The element ``ref`` names in the current tab; an unknown or stale ref is a tool error
    asking for a new snapshot."""
    named = f"{description!r} ({ref})" if description else repr(ref)
    if ref is None or not REF_PATTERN.fullmatch(ref):
        raise BrowserToolError(
            f"{named} is not an element reference; use a ref=… value from browser_snapshot"
        )
    locator = session.page.locator(f"aria-ref={ref}")
    try:
        count = await locator.count()
    except Exception:
        count = 0
    if count != 1:
        raise BrowserToolError(
            f"element {named} is not on the current page; take a new snapshot "
            "(browser_snapshot) and use its references"
        )
    return locator


async def _settle(page: Page) -> None:
    """Let a navigation an action started finish (answers come from memory: this is short)."""
    try:
        await page.wait_for_load_state("load", timeout=5_000)
    except Exception:
        return


# -- handlers ------------------------------------------------------------------------------------


def _check_address(url: str) -> str:
    address = url.strip()
    scheme = urlsplit(address).scheme.lower()
    if not scheme and address:
        address = "https://" + address
        scheme = "https"
    if scheme not in ("http", "https"):
        raise BrowserToolError(
            f"cannot open {url!r}: only http and https addresses can be opened in this browser"
        )
    return address


async def navigate(session: BrowserSession, arguments: NavigateArguments) -> ToolResult:
    address = _check_address(arguments.url)
    page = session.page
    try:
        await page.goto(address, wait_until="load")
    except Exception as error:
        raise BrowserToolError(f"navigating to {address} failed: {_first_line(error)}") from None
    return _done(f"Opened {address}", await page_state(session))


async def navigate_back(session: BrowserSession, arguments: NoArguments) -> ToolResult:
    response = await session.page.go_back(wait_until="load")
    if response is None and session.page.url in ("about:blank", ""):
        return _done("There is no previous page in this tab.", await page_state(session))
    return _done("Went back to the previous page", await page_state(session))


async def snapshot(session: BrowserSession, arguments: NoArguments) -> ToolResult:
    return ToolResult(text=await page_state(session))


async def click(session: BrowserSession, arguments: ClickArguments) -> ToolResult:
    target = await element(session, arguments.ref, arguments.element)
    modifiers: Any = arguments.modifiers or None
    new_tab = arguments.button == "middle" or bool(
        {"Control", "ControlOrMeta", "Meta", "Shift"} & set(arguments.modifiers)
    )
    try:
        new_tab = new_tab or bool(await target.evaluate(_OPENS_TAB, timeout=ACTION_TIMEOUT_MS))
        if new_tab:
            async with session.context.expect_page(timeout=ACTION_TIMEOUT_MS) as opened:
                await _press(target, arguments, modifiers)
            await _settle(await opened.value)
        else:
            await _press(target, arguments, modifiers)
    except Exception as error:
        raise BrowserToolError(f"clicking {arguments.ref} failed: {_first_line(error)}") from None
    await _settle(session.page)
    verb = "Double-clicked" if arguments.doubleClick else "Clicked"
    return _done(f"{verb} {_named(arguments)}", await page_state(session))


_OPENS_TAB = """element => {
    const link = element.closest('a[href][target], area[href][target]');
    const form = element.closest('form[target]');
    const target = (link || form)?.target?.toLowerCase() ?? '';
    return target !== '' && !['_self', '_top', '_parent'].includes(target);
}"""
"""Whether clicking the element opens a new tab (a link or form with a target)."""


async def _press(target: Locator, arguments: ClickArguments, modifiers: Any) -> None:
    if arguments.doubleClick:
        await target.dblclick(button=arguments.button, modifiers=modifiers)
    else:
        await target.click(button=arguments.button, modifiers=modifiers)


async def type_text(session: BrowserSession, arguments: TypeArguments) -> ToolResult:
    target = await element(session, arguments.ref, arguments.element)
    try:
        if arguments.slowly:
            await target.press_sequentially(arguments.text)
        else:
            await target.fill(arguments.text)
        if arguments.submit:
            await target.press("Enter")
    except Exception as error:
        raise BrowserToolError(
            f"typing into {arguments.ref} failed: {_first_line(error)}"
        ) from None
    await _settle(session.page)
    submitted = " and pressed Enter" if arguments.submit else ""
    return _done(
        f"Typed {arguments.text!r} into {_named(arguments)}{submitted}", await page_state(session)
    )


async def press_key(session: BrowserSession, arguments: PressKeyArguments) -> ToolResult:
    try:
        await session.page.keyboard.press(arguments.key)
    except Exception as error:
        raise BrowserToolError(f"pressing {arguments.key!r} failed: {_first_line(error)}") from None
    await _settle(session.page)
    return _done(f"Pressed {arguments.key}", await page_state(session))


async def select_option(session: BrowserSession, arguments: SelectOptionArguments) -> ToolResult:
    target = await element(session, arguments.ref, arguments.element)
    try:
        chosen = await target.select_option(arguments.values)
    except Exception as error:
        raise BrowserToolError(
            f"selecting {arguments.values} in {arguments.ref} failed: {_first_line(error)}"
        ) from None
    await _settle(session.page)
    return _done(f"Selected {chosen} in {_named(arguments)}", await page_state(session))


async def hover(session: BrowserSession, arguments: ElementArguments) -> ToolResult:
    target = await element(session, arguments.ref, arguments.element)
    try:
        await target.hover()
    except Exception as error:
        raise BrowserToolError(f"hovering {arguments.ref} failed: {_first_line(error)}") from None
    return _done(f"Hovered over {_named(arguments)}", await page_state(session))


async def tabs(session: BrowserSession, arguments: TabsArguments) -> ToolResult:
    if arguments.action == "list":
        lines = [await _tab_line(session, index) for index in range(len(session.tabs))]
        return ToolResult(text="### Tabs\n" + "\n".join(lines))
    if arguments.action == "new":
        try:
            await session.new_tab()
        except TabLimitError as error:
            raise BrowserToolError(str(error)) from None
        return _done("Opened a new tab", await page_state(session))
    index = session.current if arguments.index is None else arguments.index
    if index >= len(session.tabs):
        raise BrowserToolError(
            f"there is no tab {index}; the open tabs are 0 to {len(session.tabs) - 1}"
        )
    if arguments.action == "select":
        session.current = index
        await session.page.bring_to_front()
        return _done(f"Switched to tab {index}", await page_state(session))
    if len(session.tabs) == 1:
        await session.new_tab()  # the browser always keeps one tab open
    await session.tabs[index].close()
    await asyncio.sleep(0)
    return _done(f"Closed tab {index}", await page_state(session))


async def wait_for(session: BrowserSession, arguments: WaitForArguments) -> ToolResult:
    if arguments.time is None and arguments.text is None and arguments.textGone is None:
        raise BrowserToolError("give time, text or textGone to wait for")
    page = session.page
    done: list[str] = []
    seconds = 0.0
    if arguments.time is not None:
        seconds = min(arguments.time, WAIT_LIMIT_SECONDS)
        await asyncio.sleep(seconds)
        done.append(f"Waited {seconds:g} s")
    timeout = max(WAIT_LIMIT_SECONDS - seconds, 1.0) * 1000
    try:
        if arguments.text is not None:
            await page.get_by_text(arguments.text).first.wait_for(state="visible", timeout=timeout)
            done.append(f"The text {arguments.text!r} is shown")
        if arguments.textGone is not None:
            await page.get_by_text(arguments.textGone).first.wait_for(
                state="hidden", timeout=timeout
            )
            done.append(f"The text {arguments.textGone!r} is gone")
    except Exception:
        raise BrowserToolError(
            f"gave up after {WAIT_LIMIT_SECONDS:g} s: the text did not "
            + ("appear" if arguments.text is not None else "go away")
        ) from None
    return _done("; ".join(done), await page_state(session))


async def take_screenshot(session: BrowserSession, arguments: ScreenshotArguments) -> ToolResult:
    page = session.page
    try:
        if arguments.ref is not None:
            target = await element(session, arguments.ref, arguments.element or "")
            data = await target.screenshot(type=arguments.type)
            what = f"element {arguments.ref}"
        else:
            data = await page.screenshot(type=arguments.type, full_page=arguments.fullPage)
            what = "the full page" if arguments.fullPage else "the viewport"
    except BrowserToolError:
        raise
    except Exception as error:
        raise BrowserToolError(f"the screenshot failed: {_first_line(error)}") from None
    image = ToolImage(data=base64.b64encode(data).decode(), mime_type=f"image/{arguments.type}")
    text = f"### Done\nScreenshot of {what} of {page.url}"
    if arguments.filename:
        text += " (returned here; no file is written)"
    return ToolResult(text=text, images=[image])


# -- the table -----------------------------------------------------------------------------------


def _named(arguments: ElementArguments) -> str:
    return f"{arguments.element} ({arguments.ref})" if arguments.element else arguments.ref


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


Handler = Callable[[BrowserSession, Any], Awaitable[ToolResult]]


def _serialised(handler: Handler) -> Handler:
    """One call at a time per session, each within the session's deadline; a
    ``BrowserToolError`` becomes an error result; a call past its deadline, one that timed out or
    failed in the browser, or a crashed page, becomes one after the session recovered
    (``BrowserSession.recover``)."""

    async def run(session: BrowserSession, arguments: Any) -> ToolResult:
        async with session.lock:
            deadline = session.call_deadline
            problem: str | None = None
            try:
                result = await asyncio.wait_for(handler(session, arguments), deadline)
            except TimeoutError:
                problem = (
                    f"the call did not finish within the per-call deadline of {deadline:g} s "
                    "(a page's script may never yield)"
                )
            except BrowserToolError as error:
                if not (session.crashed or _timed_out(error) or session.context_limit_pending()):
                    return ToolResult(text=f"Error: {error}", is_error=True)
                problem = str(error)
            except Exception as error:  # the page failed under the call (crashed, hung, gone)
                problem = f"the browser failed: {_first_line(error)}"
            limit = session.context_limit()
            if problem is None:
                if not session.crashed and limit is None:
                    return result
                problem = _crash_note(session, limit)
            elif session.crashed or limit is not None:
                problem += "; " + _crash_note(session, limit)
            recovered = await session.recover()
            if recovered:
                problem += ". Recovered: " + "; ".join(recovered)
            return ToolResult(text=f"Error: {problem}", is_error=True)

    return run


def _timed_out(error: BrowserToolError) -> bool:
    """Whether a tool error came from a Playwright timeout (the page may have stopped
    answering); other tool errors (an unknown ref, a bad address) need no recovery."""
    return "Timeout" in str(error)


def _crash_note(session: BrowserSession, limit: str | None) -> str:
    """What crashed and why: ``limit`` names the context's own memory cap when it ended one of
    the context's processes (a tab's, or a frame's)."""
    pages = ", ".join(session.crashed)
    if limit is not None:
        held = f"it was stopped by {limit}, which holds this browser's pages only"
        if not pages:
            return f"a frame's process needed more memory: {held}"
        return f"a page crashed ({pages}): {held}; the tab is closed"
    return (
        f"a page crashed ({pages}), most likely out of memory ({session.memory_limits}); the "
        "tab is closed"
    )


def _spec(
    name: str,
    arguments: type[ToolArguments],
    handler: Handler,
    description: str,
    *,
    acts: bool,
    title: str,
) -> ToolSpec[BrowserSession]:
    return ToolSpec(
        name=name,
        arguments=arguments,
        handler=_serialised(handler),
        writes=acts,
        description=description,
        destructive=False,
        idempotent=not acts,
        title=title,
    )


BROWSER_TOOLS: dict[str, ToolSpec[BrowserSession]] = {
    spec.name: spec
    for spec in (
        _spec(
            "browser_navigate",
            NavigateArguments,
            navigate,
            "Open an address in the current tab and show the page.",
            acts=True,
            title="Open a page",
        ),
        _spec(
            "browser_navigate_back",
            NoArguments,
            navigate_back,
            "Go back to the previous page of the current tab.",
            acts=True,
            title="Go back",
        ),
        _spec(
            "browser_snapshot",
            NoArguments,
            snapshot,
            "Show the current page as an accessibility snapshot; each element you can act on "
            "carries a reference [ref=eN] for the other tools.",
            acts=False,
            title="Page snapshot",
        ),
        _spec(
            "browser_click",
            ClickArguments,
            click,
            "Click an element of the latest snapshot, by its ref.",
            acts=True,
            title="Click",
        ),
        _spec(
            "browser_type",
            TypeArguments,
            type_text,
            "Type text into an editable element of the latest snapshot, optionally pressing "
            "Enter afterwards.",
            acts=True,
            title="Type text",
        ),
        _spec(
            "browser_press_key",
            PressKeyArguments,
            press_key,
            "Press a key (or a combination such as Control+a) on the current page.",
            acts=True,
            title="Press a key",
        ),
        _spec(
            "browser_select_option",
            SelectOptionArguments,
            select_option,
            "Choose one or more options of a drop-down of the latest snapshot.",
            acts=True,
            title="Select an option",
        ),
        _spec(
            "browser_hover",
            ElementArguments,
            hover,
            "Move the mouse over an element of the latest snapshot.",
            acts=True,
            title="Hover",
        ),
        _spec(
            "browser_tabs",
            TabsArguments,
            tabs,
            f"List the open tabs, open a new one (at most {MAX_TABS} may be open), close one, "
            "or switch to one.",
            acts=True,
            title="Tabs",
        ),
        _spec(
            "browser_wait_for",
            WaitForArguments,
            wait_for,
            "Wait some seconds, or until a text appears or disappears on the current page.",
            acts=False,
            title="Wait",
        ),
        _spec(
            "browser_take_screenshot",
            ScreenshotArguments,
            take_screenshot,
            "Take a screenshot of the current page (or of one element); the image is returned.",
            acts=False,
            title="Screenshot",
        ),
    )
}
"""The browser tools by name."""

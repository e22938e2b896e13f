"""``python -m mcp_servers.browser``: serve a browser over a page archive on stdio.

``--archive PATH`` names a WARC file or a page folder (``sandboxes.browser.archive``);
``--start-url`` opens a page first. The browser (one headless Chromium, off the network) starts
with the server and is closed, with its profile, when the client disconnects.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from mcp_servers.browser.server import browser_server
from mcp_servers.serving import serve_stdio


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers.browser",
        description="Serve Playwright MCP's browser tools over stdio, on a page archive.",
    )
    parser.add_argument(
        "--archive", type=Path, required=True, help="a .warc/.warc.gz file or a page folder"
    )
    parser.add_argument("--start-url", help="the page to open first")
    parser.add_argument(
        "--summarise-pages",
        action="store_true",
        help="have the client's model summarise long page snapshots (MCP sampling)",
    )
    return parser


async def _serve(archive_path: Path, start_url: str | None, summarise: bool) -> None:
    from sandboxes.base import SandboxError
    from sandboxes.browser.archive import ArchiveError
    from sandboxes.browser.sandbox import BrowserProvider

    async with BrowserProvider() as provider:
        try:
            archive = await provider.archive(archive_path)
        except ArchiveError as error:
            raise SystemExit(f"error: --archive: {error}") from None
        try:
            sandbox = await provider.open(archive, [start_url] if start_url else [])
        except SandboxError as error:
            raise SystemExit(f"error: {error}") from None
        async with sandbox:
            print(
                f"serving the browser over {archive_path} ({len(archive)} pages) on stdio",
                file=sys.stderr,
            )
            await serve_stdio(browser_server(sandbox.session, summarise_pages=summarise).server())


def main(argv: list[str] | None = None) -> None:
    arguments = _parser().parse_args(argv)
    try:
        asyncio.run(_serve(arguments.archive, arguments.start_url, arguments.summarise_pages))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()

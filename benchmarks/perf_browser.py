"""``make perf-browser``: browser sandbox figures on real Chromium, printed.

Builds a page folder of ``--pages`` generated encyclopedia pages (a heading, paragraphs, a
40-row table, a list of links; about 20 KB of HTML each), then measures:
- the browser's start (driver and Chromium, once per run);
- a judge's browser context ready: ``BrowserProvider.open`` (new context, archive routing, a
  blank tab), ``--contexts`` times, each closed after: cold (no spare context), and as judges
  meet it, ``--judge-seconds`` after the previous judge's (the spare made meanwhile is ready);
- ``browser_navigate`` to an archived page (the answer holds the page's snapshot) and a bare
  ``browser_snapshot``, through an in-memory MCP client, ``--calls`` times after ``--warmup``;
- 8 judges at once: 8 contexts opened together, each navigating ``--calls`` pages through its
  own MCP session concurrently: wall time, and the median and p95 of each call;
- memory per context: the unique memory (USS) of the browser's process tree with 8 contexts on
  a page, minus with none, divided by 8.

Targets (issue 18): context ready <= 300 ms; navigate + snapshot <= 200 ms median; 8 concurrent
judges' browsers on this machine. Nothing is asserted: figures are printed, then a JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from mcp import Client

from benchmarks.perf_sandboxes import percentile
from mcp_servers.browser.server import browser_server
from sandboxes.browser.archive import FolderPage, PageArchive, load_archive, write_index
from sandboxes.browser.sandbox import BrowserProvider

BASE = "https://encyclopedia.example/wiki/"

TARGETS_MS = {"context ready": 300.0, "browser_navigate (with snapshot)": 200.0}


def build_archive(folder: Path, pages: int) -> list[str]:
    """Write ``pages`` generated pages as a page folder; return their addresses."""
    (folder / "files").mkdir(parents=True)
    urls = [f"{BASE}City_{number}" for number in range(pages)]
    entries = []
    for number, url in enumerate(urls):
        rows = "".join(
            f"<tr><td>{year}</td><td>{10_000 + number * 37 + year}</td><td>District {year % 7}"
            "</td></tr>"
            for year in range(1980, 2020)
        )
        links = "".join(
            f"<li><a href='{urls[(number + step) % pages]}'>City {(number + step) % pages}</a></li>"
            for step in range(1, 15)
        )
        paragraphs = "".join(
            f"<p>City {number} paragraph {index}: population, economy and history notes, "
            "with figures that later pages contradict.</p>"
            for index in range(12)
        )
        html = (
            f"<!doctype html><html><head><title>City {number}</title></head><body>"
            f"<h1>City {number}</h1>{paragraphs}"
            f"<table><caption>Population by year</caption><tr><th>Year</th><th>People</th>"
            f"<th>Largest district</th></tr>{rows}</table><ul>{links}</ul></body></html>"
        )
        name = f"files/city{number}.html"
        (folder / name).write_text(html, encoding="utf-8")
        entries.append(FolderPage(url=url, file=name))
    write_index(folder, entries)
    return urls


def _report(name: str, samples: list[float], figures: dict[str, Any]) -> None:
    milliseconds = [value * 1000 for value in samples]
    median, p95 = statistics.median(milliseconds), percentile(milliseconds, 0.95)
    target = TARGETS_MS.get(name)
    verdict = ""
    if target is not None:
        verdict = f"   target <= {target:.0f} ms: {'met' if median <= target else 'MISSED'}"
    print(
        f"{name:<40} median {median:8.1f} ms   p95 {p95:8.1f} ms   (n={len(samples)}){verdict}",
        flush=True,
    )
    figures[name] = {"median_ms": round(median, 2), "p95_ms": round(p95, 2)}


def _tree_uss(pids: list[int]) -> int:
    """Unique memory of the processes and all their descendants, in bytes."""
    seen: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            root = psutil.Process(pid)
        except psutil.Error:
            continue
        for process in [root, *root.children(recursive=True)]:
            seen[process.pid] = process
    total = 0
    for process in seen.values():
        try:
            total += process.memory_full_info().uss
        except psutil.Error:
            continue
    return total


async def _navigations(client: Client, urls: list[str], calls: int, offset: int = 0) -> list[float]:
    samples = []
    for number in range(calls):
        url = urls[(offset + number) % len(urls)]
        started = time.perf_counter()
        result = await client.call_tool("browser_navigate", {"url": url})
        samples.append(time.perf_counter() - started)
        if result.is_error:
            raise RuntimeError(f"browser_navigate {url} failed: {result.content}")
    return samples


async def _context_figures(
    provider: BrowserProvider,
    archive: PageArchive,
    arguments: argparse.Namespace,
    figures: dict[str, Any],
) -> None:
    """Context ready: cold, then with the spare the previous judge's open left."""
    provider.keep_spare = False
    cold: list[float] = []
    for _ in range(arguments.contexts):
        started = time.perf_counter()
        sandbox = await provider.open(archive)
        cold.append(time.perf_counter() - started)
        await sandbox.destroy()
    _report("context ready, cold", cold, figures)
    provider.keep_spare = True
    await (await provider.open(archive)).destroy()  # leaves a spare behind
    ready: list[float] = []
    for _ in range(arguments.contexts):
        await asyncio.sleep(arguments.judge_seconds)  # the previous judge at work
        started = time.perf_counter()
        sandbox = await provider.open(archive)
        ready.append(time.perf_counter() - started)
        await sandbox.destroy()
    _report("context ready", ready, figures)


async def measure(arguments: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="perf-browser-") as scratch:
        urls = build_archive(Path(scratch) / "archive", arguments.pages)
        archive: PageArchive = load_archive(Path(scratch) / "archive")
        async with BrowserProvider() as provider:
            started = time.perf_counter()
            process = await provider.browser()
            launch = time.perf_counter() - started
            print(f"{'browser start (once per run)':<40} {launch * 1000:8.1f} ms", flush=True)
            figures["browser start"] = {"ms": round(launch * 1000, 1)}

            await _context_figures(provider, archive, arguments, figures)

            sandbox = await provider.open(archive)
            async with sandbox, Client(browser_server(sandbox.session).server()) as client:
                await _navigations(client, urls, arguments.warmup)
                _report(
                    "browser_navigate (with snapshot)",
                    await _navigations(client, urls, arguments.calls),
                    figures,
                )
                snapshots = []
                for _ in range(arguments.calls):
                    started = time.perf_counter()
                    await client.call_tool("browser_snapshot", {})
                    snapshots.append(time.perf_counter() - started)
                _report("browser_snapshot", snapshots, figures)

            baseline = _tree_uss(process.pids)
            started = time.perf_counter()
            judges = await asyncio.gather(*(provider.open(archive) for _ in range(8)))
            opened = time.perf_counter() - started

            async def judge(number: int) -> list[float]:
                server = browser_server(judges[number].session)
                async with Client(server.server()) as client:
                    return await _navigations(client, urls, arguments.calls, offset=number * 3)

            started = time.perf_counter()
            results = await asyncio.gather(*(judge(number) for number in range(8)))
            wall = time.perf_counter() - started
            loaded = _tree_uss(process.pids)
            for sandbox in judges:
                await sandbox.destroy()
            print(f"{'8 judges: contexts opened together':<40} {opened * 1000:8.1f} ms", flush=True)
            _report("8 judges: browser_navigate each", [s for r in results for s in r], figures)
            print(
                f"{'8 judges: wall time':<40} {wall:8.2f} s    "
                f"({8 * arguments.calls} navigations, {8 * arguments.calls / wall:.1f} per s)",
                flush=True,
            )
            per_context = (loaded - baseline) / 8 / 2**20
            print(
                f"{'memory per context (USS, on a page)':<40} {per_context:8.1f} MiB   "
                f"(browser tree: {baseline / 2**20:.0f} MiB idle, {loaded / 2**20:.0f} MiB "
                "with 8 contexts)",
                flush=True,
            )
            figures["8 judges"] = {
                "open_ms": round(opened * 1000, 1),
                "wall_s": round(wall, 2),
                "navigations_per_s": round(8 * arguments.calls / wall, 1),
            }
            figures["memory per context"] = {
                "mib": round(per_context, 1),
                "idle_tree_mib": round(baseline / 2**20, 1),
                "eight_contexts_tree_mib": round(loaded / 2**20, 1),
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--contexts", type=int, default=30)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument(
        "--judge-seconds",
        type=float,
        default=1.0,
        help="time between two judges' browsers (a judge's run takes longer)",
    )
    figures = asyncio.run(measure(parser.parse_args()))
    print(json.dumps({"perf_browser": figures}))


if __name__ == "__main__":
    main()

"""``make perf-desktop``: desktop latencies and memory per backend, printed as figures.

Measures, for each backend asked for (``docker`` and/or ``local``), side by side:
- desktop ready with a document open: from the start call until the control server answers and
  LibreOffice's window shows the document (a generated .docx), and until the document's text is
  in the accessibility tree (target: docker <= 5 s, local <= 3 s);
- one screenshot (PNG) through the control server (target <= 150 ms);
- the linearised accessibility tree of a Writer page (<= 1 s) and of a Calc sheet (<= 2 s);
- 4 desktops started at once: until all four show their document, then one screenshot each;
- the peak memory of one desktop with a document open (the container's or the box's cgroup).

Nothing is asserted; the figures go to standard output (and ``--json`` writes them to a file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

import docx
import openpyxl

from sandboxes.desktop.sandbox import DesktopProvider, DesktopSandbox, DocumentFile

PARAGRAPH = "Figures for the harbour board, measured on this machine"
ROUNDS = 5
SCREENSHOTS = 20
TREES = 5
CONCURRENT = 4


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def figure(label: str, name: str, seconds: list[float], target: str = "") -> dict[str, float]:
    milliseconds = [value * 1000 for value in seconds]
    median, p95 = statistics.median(milliseconds), percentile(milliseconds, 0.95)
    aim = f"   (target {target})" if target else ""
    print(
        f"{label:<7} {name:<46} median {median:8.1f} ms   p95 {p95:8.1f} ms"
        f"   n={len(milliseconds)}{aim}"
    )
    return {"median_ms": round(median, 1), "p95_ms": round(p95, 1), "n": len(milliseconds)}


def writer_document(folder: Path) -> DocumentFile:
    path = folder / "board.docx"
    document = docx.Document()
    for index in range(12):
        document.add_paragraph(f"{PARAGRAPH} ({index + 1})")
    document.save(str(path))
    return DocumentFile(PurePosixPath(path.name), path.read_bytes())


def calc_document(folder: Path) -> DocumentFile:
    path = folder / "ledger.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in range(1, 201):
        sheet.append([f"item {row}", row, row * 3, f"=B{row}*C{row}"])
    workbook.save(str(path))
    return DocumentFile(PurePosixPath(path.name), path.read_bytes())


async def until_tree_holds(sandbox: DesktopSandbox, needle: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while needle not in await sandbox.client.accessibility_tree():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{needle!r} never showed in the tree")
        await asyncio.sleep(0.05)


async def timed(action: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await action()
    return time.perf_counter() - started, result


async def backend_figures(
    label: str, make: Callable[[], DesktopProvider], folder: Path
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    writer, calc = writer_document(folder), calc_document(folder)
    provider = make()
    try:
        ready: list[float] = []
        text: list[float] = []
        peaks: list[int] = []
        screenshot: list[float] = []
        writer_tree: list[float] = []
        for round_number in range(ROUNDS):
            started = time.perf_counter()
            sandbox = await provider.start_desktop(writer)
            ready.append(time.perf_counter() - started)
            await until_tree_holds(sandbox, PARAGRAPH)
            text.append(time.perf_counter() - started)
            if round_number == 0:
                for _ in range(SCREENSHOTS):
                    seconds, _ = await timed(sandbox.client.screenshot)
                    screenshot.append(seconds)
                for _ in range(TREES):
                    seconds, _ = await timed(partial(sandbox.observe, "a11y_tree"))
                    writer_tree.append(seconds)
            peak = sandbox.handle.peak_memory_bytes()
            if peak:
                peaks.append(peak)
            await sandbox.destroy()
        figures["ready_with_document"] = figure(
            label, "desktop ready, document window shown", ready, "docker <= 5 s, local <= 3 s"
        )
        figures["document_text_in_tree"] = figure(label, "document text in the a11y tree", text)
        figures["screenshot"] = figure(label, "screenshot (PNG, 1920x1080)", screenshot, "150 ms")
        figures["writer_tree"] = figure(label, "linearised tree, Writer page", writer_tree, "1 s")

        sandbox = await provider.start_desktop(calc)
        await until_tree_holds(sandbox, "item 1")
        calc_tree = [(await timed(partial(sandbox.observe, "a11y_tree")))[0] for _ in range(TREES)]
        await sandbox.destroy()
        figures["calc_tree"] = figure(label, "linearised tree, Calc sheet", calc_tree, "2 s")

        started = time.perf_counter()
        together = await asyncio.gather(
            *(provider.start_desktop(writer) for _ in range(CONCURRENT)), return_exceptions=True
        )
        all_ready = time.perf_counter() - started
        started_ok = [item for item in together if isinstance(item, DesktopSandbox)]
        failures = [item for item in together if not isinstance(item, DesktopSandbox)]
        shots = await asyncio.gather(*(timed(item.client.screenshot) for item in started_ok))
        concurrent_peaks = [item.handle.peak_memory_bytes() or 0 for item in started_ok]
        for item in started_ok:
            await item.destroy()
        print(
            f"{label:<7} {CONCURRENT} desktops at once: {len(started_ok)} ready in"
            f" {all_ready:.2f} s, then one screenshot each: max"
            f" {max((s for s, _ in shots), default=0) * 1000:.0f} ms;"
            f" peak memory each: {', '.join(f'{p / 2**20:.0f}' for p in concurrent_peaks)} MiB"
            + (f"; failed: {failures}" if failures else "")
        )
        figures["concurrent"] = {
            "desktops": CONCURRENT,
            "ready": len(started_ok),
            "all_ready_s": round(all_ready, 2),
            "peak_mib": [round(p / 2**20) for p in concurrent_peaks],
        }
        if peaks:
            print(
                f"{label:<7} {'peak memory of one desktop (document open)':<46}"
                f" max {max(peaks) / 2**20:8.0f} MiB   median"
                f" {statistics.median(peaks) / 2**20:6.0f} MiB   (cap"
                f" {provider.memory_bytes / 2**20:.0f} MiB)"
            )
            figures["peak_memory_mib"] = round(max(peaks) / 2**20)
    finally:
        await provider.aclose()
    return figures


def _docker_provider() -> DesktopProvider:
    from sandboxes.desktop.docker import DockerDesktopProvider
    from sandboxes.desktop.image import build_desktop_image

    return DockerDesktopProvider(build_desktop_image())


def _local_provider() -> DesktopProvider:
    from sandboxes.desktop.local import LocalDesktopProvider

    return LocalDesktopProvider()


PROVIDERS: dict[str, Callable[[], DesktopProvider]] = {
    "docker": _docker_provider,
    "local": _local_provider,
}


async def main(backends: list[str], output: Path | None) -> None:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="perf-desktop-") as scratch:
        for backend in backends:
            try:
                results[backend] = await backend_figures(backend, PROVIDERS[backend], Path(scratch))
            except Exception as error:  # one backend missing here must not hide the other
                print(f"{backend:<7} not measured: {type(error).__name__}: {error}")
                results[backend] = {"error": str(error)}
    if output is not None:
        output.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--backend",
        action="append",
        choices=sorted(PROVIDERS),
        help="Backend to measure (repeatable; default: docker and local).",
    )
    parser.add_argument("--json", type=Path, help="Also write the figures to this file.")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.backend or ["docker", "local"], arguments.json))

"""``make perf-mcp``: round-trip latency of cheap MCP tool calls, printed as figures.

Measures, through the official SDK's client, the time from sending ``tools/call`` to holding the
result, for:
- ``read_text_file`` of a 1 KB file, over stdio (``python -m mcp_servers.filesystem``) and
  in-memory (``mcp.Client(server)``), on a local tree;
- a one-row ``execute_sql`` on a frozen Postgres sandbox's read-only view (embedded cluster), over
  stdio (``python -m mcp_servers.sql --dsn``, reader role) and in-memory, and in-memory on a
  writable clone in unrestricted mode;
- ``VIEW_TRAJECTORY_STEP`` of a bundled trajectory's step, in-memory;
- ``read_text_file`` with ``head=3`` of a file whose first line is 4 MB long, in-memory (the
  reference's reader, which this server once copied, took seconds: it re-scanned a growing
  buffer), over ``--long-line-calls`` calls after 2.

Each figure is the median and 95th percentile of ``--calls`` calls after ``--warmup`` calls.
Targets (issue #4): filesystem read <= 2 ms median over stdio and <= 1 ms in-memory; one-row query
<= 5 ms median over stdio. Nothing is asserted: the figures are printed, then a JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from benchmarks.perf_sandboxes import percentile
from dataset.models import SqlSeedState, Task

MINI = Path(__file__).resolve().parents[1] / "datasets" / "examples" / "mini"

TARGETS_MS = {
    "fs read_text_file, stdio": 2.0,
    "fs read_text_file, in-memory": 1.0,
    "sql one-row execute_sql, stdio (read-only)": 5.0,
}

ONE_ROW = "SELECT id, name, price FROM items WHERE id = 42"

LONG_LINE_BYTES = 4_000_000


async def _latencies(
    client: Client, tool: str, arguments: dict[str, Any], calls: int, warmup: int
) -> list[float]:
    for _ in range(warmup):
        result = await client.call_tool(tool, arguments)
        if result.is_error:
            raise RuntimeError(f"{tool} failed while warming up: {result.content}")
    samples: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await client.call_tool(tool, arguments)
        samples.append(time.perf_counter() - started)
    return samples


def _report(name: str, samples: list[float], figures: dict[str, dict[str, float]]) -> None:
    milliseconds = [value * 1000 for value in samples]
    median, p95 = statistics.median(milliseconds), percentile(milliseconds, 0.95)
    target = TARGETS_MS.get(name)
    verdict = ""
    if target is not None:
        verdict = f"   target <= {target:.1f} ms: {'met' if median <= target else 'MISSED'}"
    print(
        f"{name:<48} median {median:7.3f} ms   p95 {p95:7.3f} ms   (n={len(samples)}){verdict}",
        flush=True,
    )
    figures[name] = {"median_ms": round(median, 4), "p95_ms": round(p95, 4)}


async def filesystem_figures(
    root: Path, calls: int, warmup: int, figures: dict[str, dict[str, float]]
) -> None:
    from mcp_servers.filesystem.server import filesystem_server
    from sandboxes.filesystem.local import LocalFileTree

    (root / "note.txt").write_text("a line of a small note\n" * 44)  # ~1 KB
    arguments = {"path": "note.txt"}
    server = filesystem_server(LocalFileTree(root))
    async with Client(server.server()) as client:
        _report(
            "fs read_text_file, in-memory",
            await _latencies(client, "read_text_file", arguments, calls, warmup),
            figures,
        )
    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_servers.filesystem", "--root", str(root)]
    )
    async with Client(stdio) as client:
        _report(
            "fs read_text_file, stdio",
            await _latencies(client, "read_text_file", arguments, calls, warmup),
            figures,
        )


async def long_line_figure(root: Path, calls: int, figures: dict[str, dict[str, float]]) -> None:
    from mcp_servers.filesystem.server import filesystem_server
    from sandboxes.filesystem.local import LocalFileTree

    (root / "long-line.txt").write_bytes(b"x" * LONG_LINE_BYTES + b"\nsecond\nthird\n")
    arguments = {"path": "long-line.txt", "head": 3}
    async with Client(filesystem_server(LocalFileTree(root)).server()) as client:
        _report(
            "fs read_text_file head=3, 4 MB line, in-memory",
            await _latencies(client, "read_text_file", arguments, calls, 2),
            figures,
        )


async def sql_figures(
    seed_dir: Path, calls: int, warmup: int, figures: dict[str, dict[str, float]]
) -> None:
    from environments.backends import BackendChoice, ProviderSet
    from environments.postgres import as_postgres_sandbox
    from mcp_servers.sql.judge_server import sql_server

    (seed_dir / "seed.sql").write_text(
        "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price numeric(8,2));\n"
        "INSERT INTO items SELECT n, 'item ' || n, n * 1.25 FROM generate_series(1, 1000) n;\n"
    )
    task = Task(
        id="perf-mcp-sql",
        domain="ds",
        subdomain="postgres",
        instruction="Nothing: a benchmark database.",
        initial_state=SqlSeedState(kind="sql_seed", path="seed.sql"),
    )
    arguments = {"sql": ONE_ROW}
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get("postgres")
        snapshot = await (await provider.create(task, seed_dir)).freeze()
        async with snapshot:
            view = as_postgres_sandbox(await snapshot.clone(writable=False))
            reader = sql_server(view)
            async with Client(reader.server()) as client:
                _report(
                    "sql one-row execute_sql, in-memory (read-only)",
                    await _latencies(client, "execute_sql", arguments, calls, warmup),
                    figures,
                )
            stdio = StdioServerParameters(
                command=sys.executable,
                args=["-m", "mcp_servers.sql", "--dsn", view.connection.dsn],
            )
            async with Client(stdio) as client:
                _report(
                    "sql one-row execute_sql, stdio (read-only)",
                    await _latencies(client, "execute_sql", arguments, calls, warmup),
                    figures,
                )
            clone = as_postgres_sandbox(await snapshot.clone(writable=True))
            async with clone:
                writer = sql_server(clone, access="unrestricted")
                async with Client(writer.server()) as client:
                    _report(
                        "sql one-row execute_sql, in-memory (unrestricted)",
                        await _latencies(client, "execute_sql", arguments, calls, warmup),
                        figures,
                    )


async def trajectory_figures(calls: int, warmup: int, figures: dict[str, dict[str, float]]) -> None:
    from mcp_servers.trajectory.loading import load_trajectory_file

    loaded = load_trajectory_file(MINI / "trajectories" / "word-memo-q4-update--c13-pass.json")
    async with Client(loaded.server().server()) as client:
        _report(
            "VIEW_TRAJECTORY_STEP with screenshot, in-memory",
            await _latencies(client, "VIEW_TRAJECTORY_STEP", {"step": 1}, calls, warmup),
            figures,
        )


async def main(calls: int, warmup: int, long_line_calls: int = 20) -> None:
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="aj-perf-mcp-") as scratch:
        base = Path(scratch)
        (base / "tree").mkdir()
        (base / "seed").mkdir()
        (base / "long").mkdir()
        await filesystem_figures(base / "tree", calls, warmup, figures)
        await sql_figures(base / "seed", calls, warmup, figures)
        await trajectory_figures(calls, warmup, figures)
        await long_line_figure(base / "long", long_line_calls, figures)
    print(json.dumps({"calls": calls, "figures": figures}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="measured calls per figure")
    parser.add_argument("--warmup", type=int, default=100, help="calls before measuring")
    parser.add_argument(
        "--long-line-calls", type=int, default=20, help="measured calls of the 4 MB line figure"
    )
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.warmup, options.long_line_calls))

"""``make perf-viewer``: how fast ``agentjudge view`` shows the first table page of a big folder.

Writes a synthetic results folder in the real on-disk format (``verdicts.jsonl`` lines are
``JudgeRecord`` documents with verdicts, tool calls and reasoning of realistic size; a few runs
get a ``logs/<key>.jsonl`` transcript; ``summary.json`` names the DS suite), 10,000 judge runs by
default. Then starts ``agentjudge view`` on it as a user would (a separate process, port picked
by the viewer) twice: cold (no index cache) and warm (the cache the first start wrote), and
fetches the table page as a browser does (``/``, ``/api/info``, ``/api/runs`` first page).

Printed figures, per start: the process's start until the URL is printed (Python and the
command's imports), opening the index (reading the cache, or starting the background read; as
the viewer reports it), the three requests of the first page, the time to the first table page
(opening the index, then from the printed URL until a full first page of rows arrives; target
<= 1 s) and until the whole index is read. Nothing is asserted.

It talks to the viewer over HTTP only, so ``bench`` does not import the layer above it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from bench.grid_runner import LOGS_DIR, SUMMARY_FILE, VERDICTS_FILE, JudgeRecord, run_key
from judge_agent.verdict import JudgeToolCall, Verdict

REPO = Path(__file__).resolve().parents[1]
MODES = (("agent", 2), ("agent", 4), ("agent", 8), ("agent", 16), ("llm", 0))
MODELS = ("openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "openai/o4-mini", "openai/gpt-4o")
SUBDOMAINS = ("filesystem", "postgres")
RESULT_TEXT = "row 1 | alpha | 42\n" * 25
REASONING = "The agent created the view and the final query returns the expected rows. " * 4


def _record(trajectory: int, mode: str, turns: int, model: str, run: int) -> JudgeRecord:
    trajectory_id = f"task-{trajectory // 4:03d}--agent-{trajectory % 4}"
    label = "PASS" if trajectory % 3 else "FAIL"
    verdict = "PASS" if (trajectory + run + turns) % 4 else "FAIL"
    if (trajectory + run) % 97 == 0:
        verdict = "INVALID"
    calls = [
        JudgeToolCall(
            turn=index + 1,
            name="VIEW_TRAJECTORY_STEP" if index == 0 else "execute_sql",
            arguments={"step": 1} if index == 0 else {"query": "select * from orders limit 25"},
            result=RESULT_TEXT,
            duration_seconds=0.01,
        )
        for index in range(min(turns, 3))
    ]
    key = run_key(trajectory_id, mode, turns, model, run)
    return JudgeRecord(
        key=key,
        trajectory_id=trajectory_id,
        task_id=f"task-{trajectory // 4:03d}",
        domain="ds",
        subdomain=SUBDOMAINS[trajectory % 2],
        mode=mode,
        turns=turns,
        model=model,
        run=run,
        agent=f"agent-{trajectory % 4}",
        label=label,
        scripted=False,
        environment="postgres" if mode == "agent" else "none",
        verdict=Verdict(
            trajectory_id=trajectory_id,
            verdict=verdict,
            confidence=0.8 if verdict != "INVALID" else None,
            reasoning=REASONING if verdict != "INVALID" else None,
            tool_calls=calls if mode == "agent" else [],
            turns_used=len(calls) + 1,
            tokens_in=12_000 + trajectory,
            tokens_out=800 + run,
            cost_usd=0.031,
            wall_time_seconds=14.2,
            stop_reason="verdict" if verdict != "INVALID" else "turn_limit",
            error="no verdict after a re-ask" if verdict == "INVALID" else None,
            model=model,
            mode=mode,
            finished_at=datetime(2026, 1, 1, tzinfo=UTC),
        ),
    )


def write_results(folder: Path, runs: int) -> int:
    """A results folder of ``runs`` judge runs (rounded to whole grid cells); returns the
    count written."""
    per_trajectory = len(MODES) * len(MODELS) * 5
    trajectories = max(1, runs // per_trajectory)
    (folder / LOGS_DIR).mkdir(parents=True, exist_ok=True)
    written = 0
    with (folder / VERDICTS_FILE).open("w", encoding="utf-8") as handle:
        for trajectory in range(trajectories):
            for mode, turns in MODES:
                for model in MODELS:
                    for run in range(1, 6):
                        record = _record(trajectory, mode, turns, model, run)
                        handle.write(record.model_dump_json() + "\n")
                        if written < 20:
                            _write_log(folder, record)
                        written += 1
    summary = {"dataset": str(REPO / "datasets" / "ds"), "output": str(folder), "runs": written}
    (folder / SUMMARY_FILE).write_text(json.dumps(summary), encoding="utf-8")
    return written


def _write_log(folder: Path, record: JudgeRecord) -> None:
    events = [
        {"event": "start", "t": 0.0, "trajectory_id": record.trajectory_id, "mode": record.mode},
        {"event": "verdict", "t": 1.0, "verdict": record.verdict.model_dump(mode="json")},
    ]
    path = folder / LOGS_DIR / f"{record.key}.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")


def _get(url: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as response:
        body: bytes = response.read()
    return time.perf_counter() - started, body


def measure_start(folder: Path, cache: Path) -> dict[str, float]:
    """Start the viewer on ``folder``, fetch the first table page, stop it; the timings."""
    command = [sys.executable, "-m", "agentjudge", "view", str(folder), "--cache-dir", str(cache)]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
    )
    try:
        assert process.stdout is not None
        url = ""
        for line in process.stdout:
            if line.startswith("Viewer: "):
                url = line.split()[1]
                break
        if not url:
            raise RuntimeError("the viewer exited before printing its address")
        ready = time.perf_counter() - started
        html_seconds, _ = _get(url)
        info_seconds, info = _get(url + "api/info")
        page_seconds, page = _get(url + "api/runs?limit=100")
        shown = json.loads(page)
        while len(shown["rows"]) < 100:  # the first rows are still being read
            more_seconds, page = _get(url + "api/runs?limit=100")
            page_seconds += more_seconds
            shown = json.loads(page)
        first_page = time.perf_counter() - started - ready
        while not shown["complete"]:
            time.sleep(0.05)
            shown = json.loads(_get(url + "api/runs?limit=100")[1])
        complete = time.perf_counter() - started - ready
        open_seconds = float(json.loads(info)["index_seconds"])
        return {
            "ready": ready,
            "open": open_seconds,
            "html": html_seconds,
            "info": info_seconds,
            "page": page_seconds,
            "first_page": open_seconds + first_page,
            "complete": open_seconds + complete,
            "rows": float(shown["total"]),
        }
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="judge runs in the folder")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perf-viewer-") as scratch:
        root = Path(scratch)
        folder = root / "results"
        started = time.perf_counter()
        written = write_results(folder, arguments.runs)
        size = (folder / VERDICTS_FILE).stat().st_size
        print(
            f"results folder: {written} judge runs, verdicts.jsonl {size / 1e6:.1f} MB, "
            f"written in {time.perf_counter() - started:.1f} s"
        )
        for name in ("cold", "warm"):
            figures = measure_start(folder, root / "cache")
            print(
                f"{name}: {int(figures['rows'])} rows; process start to URL "
                f"{figures['ready']:.2f} s (imports); opening the index "
                f"{figures['open'] * 1000:.0f} ms; requests: / {figures['html'] * 1000:.0f} ms, "
                f"/api/info {figures['info'] * 1000:.0f} ms, /api/runs "
                f"{figures['page'] * 1000:.0f} ms; time to first table page "
                f"{figures['first_page']:.2f} s (target <= 1 s); whole index read "
                f"{figures['complete']:.2f} s"
            )


if __name__ == "__main__":
    main()

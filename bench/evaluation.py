"""The bench pipeline around the judge grid: replay and verifier check, baselines, the report.

``agentjudge judge`` runs, in order: the dataset's replay (resumable; it also runs every task
verifier on the replayed state), the baseline judges (written to ``baselines.jsonl``), the judge
grid when a model is configured (``judge_agent.runner``), and finally the report over everything
in the output folder. Without a model the first two and the report still run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.baselines import baseline_predictions
from bench.report import ReportFiles, write_report
from bench.results import BASELINES_FILE, Prediction, read_predictions
from bench.scores import BenchReport
from bench.scoring import build_report
from dataset.store import load_dataset, write_text_atomic
from judge_agent.providers.registry import no_model_hint
from judge_agent.runner import SUMMARY_FILE as JUDGE_SUMMARY_FILE
from replay.report import FidelityReport
from replay.runner import REPORT_FILE, ReplaySummary, read_reports, replay_dataset
from sandboxes.providers import BackendChoice

__all__ = [
    "EARLIER_RUNS_NOTE",
    "no_model_note",
    "replay_and_verify",
    "replay_notes",
    "report_folder",
    "write_baselines",
]


def no_model_note() -> str:
    """The report's note when no judge model was configured: how to configure one, from the
    provider registry."""
    return (
        "No judge model was configured, so this report holds the baselines only. "
        + no_model_hint("sentence")
    )


EARLIER_RUNS_NOTE = (
    "No judge model was configured for this invocation; the judge rows come from earlier runs "
    "recorded in this folder."
)


async def replay_and_verify(
    root: Path,
    folder: Path,
    choice: BackendChoice,
    *,
    jobs: int = 4,
    on_report: Callable[[FidelityReport], None] | None = None,
) -> tuple[ReplaySummary, dict[str, FidelityReport]]:
    """Replay the dataset into ``folder`` (resuming an earlier ``agentjudge replay`` there) and
    return the summary and each trajectory's report, verifier result included."""
    summary = await replay_dataset(root, folder, choice=choice, jobs=jobs, on_report=on_report)
    return summary, read_reports(folder / REPORT_FILE)


def replay_notes(summary: ReplaySummary) -> list[str]:
    """What the replay could not do, said plainly for the report."""
    total = summary.total
    notes: list[str] = []
    if total.diverged or total.failed:
        notes.append(
            f"{total.diverged} replay(s) diverged and {total.failed} failed: tool-using judges of "
            "those trajectories saw a state that may differ from the one the agent left, and the "
            "verifier baseline is INVALID where no verifier ran (see the replay reports)."
        )
    if total.unsupported:
        notes.append(
            f"{total.unsupported} trajectory(ies) belong to domains without a replay yet: their "
            "judges had the trajectory only (no environment tools) and the verifier baseline is "
            "INVALID on them."
        )
    return notes


def write_baselines(
    root: Path, output: Path, replay_reports: dict[str, FidelityReport] | None
) -> list[Prediction]:
    """Compute every baseline on the dataset at ``root`` and (re)write ``baselines.jsonl``."""
    dataset = load_dataset(root, partial=True)
    predictions = baseline_predictions(dataset.trajectories, dataset.tasks, replay_reports)
    output.mkdir(parents=True, exist_ok=True)
    write_text_atomic(
        output / BASELINES_FILE,
        "".join(prediction.model_dump_json() + "\n" for prediction in predictions),
    )
    return predictions


def report_folder(
    folder: Path,
    *,
    output: Path | None = None,
    notes: Sequence[str] = (),
    model_configured: bool = True,
    replicates: int = 2000,
) -> tuple[BenchReport, ReportFiles]:
    """Score everything in a judge output folder and write the report (into ``output``, by
    default the folder itself). ``model_configured=False`` says in the report that no judge
    could run now."""
    predictions = read_predictions(folder)
    dataset = str(folder)
    summary_path = folder / JUDGE_SUMMARY_FILE
    if summary_path.is_file():
        dataset = json.loads(summary_path.read_text(encoding="utf-8")).get("dataset", dataset)
    all_notes = list(notes)
    judged = any(p.config.kind == "judge" for p in predictions)
    if not model_configured:
        all_notes.append(no_model_note() if not judged else EARLIER_RUNS_NOTE)
    elif not judged:
        all_notes.append("No judge verdicts in these results: the report holds baselines only.")
    report = build_report(
        predictions,
        dataset=dataset,
        title=f"Judge evaluation: {Path(dataset).name}",
        notes=all_notes,
        replicates=replicates,
    )
    files = write_report(report, output or folder)
    return report, files

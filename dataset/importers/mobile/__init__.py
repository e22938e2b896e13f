"""Importers of Android (and AgentRewardBench web) trajectories into the unified format.

``import_mobile(format, sources, destination, labels=...)`` reads AndroidWorld checkpoints,
SPA-Bench sessions, A3 or AITK histories or AgentRewardBench trajectories (one module each),
applies the annotators' votes of a labels file (AgentRewardBench: its release's
``annotations.csv`` unless another is given), and writes the dataset; every problem names its
file.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from dataset.importers.mobile.a3 import read_a3, read_aitk
from dataset.importers.mobile.agentrewardbench import read_agentrewardbench, release_annotations
from dataset.importers.mobile.androidworld import read_androidworld
from dataset.importers.mobile.common import BENCHMARK_KEY, ImportSummary, SourceRun, write_runs
from dataset.importers.mobile.labels import read_votes
from dataset.importers.mobile.spa_bench import read_spa_bench
from dataset.problems import ProblemLog

__all__ = ["BENCHMARK_KEY", "FORMATS", "ImportSummary", "import_mobile"]

Reader = Callable[[Path, ProblemLog], Iterator[SourceRun]]

FORMATS: dict[str, Reader] = {
    "androidworld": read_androidworld,
    "spa-bench": read_spa_bench,
    "a3": read_a3,
    "aitk": read_aitk,
    "agentrewardbench": read_agentrewardbench,
}
"""The source formats by name (``agentjudge datasets import-mobile --format``)."""


def import_mobile(
    source_format: str,
    sources: Sequence[Path],
    destination: Path,
    *,
    labels: Path | None = None,
) -> ImportSummary:
    """Import every run of ``sources`` (all in ``source_format``) into ``destination``."""
    reader = FORMATS.get(source_format)
    if reader is None:
        raise ValueError(f"unknown format {source_format!r} (known: {', '.join(FORMATS)})")
    log = ProblemLog(Path.cwd())
    if labels is None and source_format == "agentrewardbench":
        found = {path for source in sources if (path := release_annotations(source)) is not None}
        labels = found.pop() if len(found) == 1 else None
    votes = read_votes(labels, log) if labels is not None else None
    runs = itertools.chain.from_iterable(reader(source, log) for source in sources)
    return write_runs(
        runs, destination, log=log, votes=votes, generator=f"import-mobile {source_format}"
    )

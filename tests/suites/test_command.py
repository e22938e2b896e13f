"""The shared command line of the DS and workspace suites: ``--only`` picks tasks by each suite's
own id, the build gets the options, and problems make the exit code 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from suites import command
from suites.ds import __main__ as ds_main
from suites.ds.build import BuildReport
from suites.workspace import __main__ as workspace_main


def test_only_picks_tasks_and_problems_fail_the_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Path, list[str], int, str]] = []

    async def build(output: Path, tasks: list[str], *, jobs: int, description: str) -> BuildReport:
        calls.append((output, tasks, jobs, description))
        return BuildReport(problems=["task b: its verifier failed"] if "b" in tasks else [])

    def run(*argv: str) -> int:
        return command.build_suite_command(
            list(argv),
            prog="suite",
            doc=None,
            output=tmp_path / "default",
            jobs=3,
            description="words",
            tasks=lambda: ["a", "b", "c"],
            task_id=lambda task: task,
            build=build,
        )

    assert run("--only", "a", "--only", "c") == 0
    assert calls[-1] == (tmp_path / "default", ["a", "c"], 3, "words")
    assert "2 tasks, 0 runs (0 PASS)" in capsys.readouterr().out
    assert run("--output", str(tmp_path / "x"), "--jobs", "1") == 1
    assert calls[-1] == (tmp_path / "x", ["a", "b", "c"], 1, "words")
    assert "task b: its verifier failed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("module", "default"), [(ds_main, "datasets/ds"), (workspace_main, "datasets/workspace")]
)
def test_each_suite_names_its_own_tasks_and_folder(
    module: object, default: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}

    def record(argv: object, **options: object) -> int:
        seen.update(options)
        return 0

    monkeypatch.setattr(module, "build_suite_command", record)
    assert module.main([]) == 0  # type: ignore[attr-defined]
    assert seen["output"] == Path(default)
    tasks = seen["tasks"]()  # type: ignore[operator]
    task_id = seen["task_id"]
    ids = [task_id(task) for task in tasks]  # type: ignore[operator]
    assert ids
    assert len(set(ids)) == len(ids)

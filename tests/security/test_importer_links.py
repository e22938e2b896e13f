"""Importers take only regular files from a source folder, and never through a link that leaves
it: a planted link's target (a secret, ``/etc/passwd``) never reaches the dataset, and the user is
told which file was refused. Each case runs the real ``agentjudge datasets import-*`` command."""

from __future__ import annotations

import json
from pathlib import Path

from tests.dataset.importers.mobile.test_mobile_importers import png
from tests.dataset.importers.test_osworld import _osworld_tree
from tests.dataset.importers.test_search_importers import RUN
from tests.security.test_results_folders import agentjudge

SECRET = "aws_secret_access_key = do-not-leak-0123456789"


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET + "\n")
    return path


def _holds_secret(folder: Path) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and SECRET.encode() in path.read_bytes()
    ]


def test_an_osworld_download_linked_outside_the_run_is_not_copied(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    results, tasks = _osworld_tree(tmp_path / "source")
    writer_run = next(path for path in results.rglob("traj.jsonl") if "writer" in str(path))
    run = writer_run.parent
    (run / "Quarterly_Memo.docx").symlink_to(secret)  # the name the download step gives
    out = tmp_path / "dataset"
    result = agentjudge(
        "datasets", "import-osworld", str(results), str(out), "--tasks-root", str(tasks)
    )
    said = result.stdout + result.stderr
    assert "Traceback" not in said
    assert f"leads to {secret}, outside the source folder" in said
    assert _holds_secret(out) == []
    assert "downloaded file(s) were not supplied" in said  # counted as missing instead


def _spa_bench_run(session: Path, task: str) -> Path:
    """One SPA-Bench run as its writer lays it out: ``session/<task>/<agent>/`` with screens
    and a ``log.json`` of step records ending in a summary; the task text in ``results.csv``."""
    run = session / task / "AutoUI"
    run.mkdir(parents=True)
    for number in range(2):
        (run / f"{number}.png").write_bytes(png((number * 40, 0, 0)))
    step = {
        "step": 1,
        "response": "tap",
        "action": ["TAP", {"detail_type": "coordinates", "detail": [540, 1200]}],
    }
    (run / "log.json").write_text(json.dumps([step, {"total_steps": 1, "finish_signal": 0}]))
    results = session / "results.csv"
    if not results.exists():
        results.write_text("task_identifier,task_description,AutoUI_exit_code\n")
    with results.open("a") as rows:
        rows.write(f"{task},Add contact Bob,0\n")
    return run


def test_spa_bench_screens_linked_outside_the_source_are_not_imported(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    source = tmp_path / "session-s1"
    run = _spa_bench_run(source, "contacts_01")
    (run / "1.xml").symlink_to(secret)
    (run / "0.png").unlink()
    (run / "0.png").symlink_to(secret)
    out = tmp_path / "dataset"
    result = agentjudge("datasets", "import-mobile", str(source), str(out), "--format", "spa-bench")
    said = " ".join((result.stdout + result.stderr).split())
    assert "Traceback" not in said
    assert "0.png' is a link" in said  # named with the step and field that name it
    assert not out.exists() or _holds_secret(out) == []


def test_a_page_folder_with_a_link_outside_is_refused_by_the_search_import(
    tmp_path: Path,
) -> None:
    secret = _secret(tmp_path)
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "index.html").write_text("<p>a page</p>")
    (pages / "leak.html").symlink_to(secret)
    runs = tmp_path / "run.json"
    runs.write_text(json.dumps([RUN]))
    out = tmp_path / "dataset"
    result = agentjudge("datasets", "import-search", str(runs), str(out), "--archive", str(pages))
    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "Traceback" not in said
    assert f"leads to {secret}, outside the source folder" in said
    assert _holds_secret(out) == []


def test_a_json_nested_200000_deep_is_one_problem_and_the_other_runs_import(
    tmp_path: Path,
) -> None:
    source = tmp_path / "session-s1"
    _spa_bench_run(source, "contacts_01")
    deep = _spa_bench_run(source, "contacts_02")
    (deep / "log.json").write_text("[" * 200_000 + "]" * 200_000)
    out = tmp_path / "dataset"
    result = agentjudge("datasets", "import-mobile", str(source), str(out), "--format", "spa-bench")
    said = result.stdout + result.stderr
    assert "RecursionError" not in said
    assert f"{deep / 'log.json'}" in said
    assert "nested deeper than 256 levels" in said
    assert "imported 1 trajectory(ies)" in said

"""The import-linter contracts: they pass on the code as it is and catch an upward import.

The packages and ``pyproject.toml`` are copied to a scratch folder, so the check runs on exactly
the files under test and the planted import never touches the working tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    script = Path(sys.executable).parent / "lint-imports"
    found = str(script) if script.exists() else shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed: it is part of the dev extra")
    return found


def _copy(target: Path) -> Path:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = config["tool"]["importlinter"]["root_packages"]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in packages:
        shutil.copytree(REPO / package, target / package, ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", target / "pyproject.toml")
    return target


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(folder)}
    return subprocess.run(
        [_lint_imports(), "--no-cache"],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_contracts_hold_and_an_upward_import_breaks_them(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "copy")
    clean = _run(copy)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "BROKEN" not in clean.stdout

    models = copy / "dataset" / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "\nimport bench  # noqa\n")
    broken = _run(copy)
    assert broken.returncode != 0, broken.stdout
    assert "dataset.models -> bench" in broken.stdout, broken.stdout


def test_the_judge_may_not_start_environments(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "copy")
    loop = copy / "judge_agent" / "loop.py"
    loop.write_text(loop.read_text(encoding="utf-8") + "\nimport sandboxes.base  # noqa\n")
    broken = _run(copy)
    assert broken.returncode != 0, broken.stdout
    assert "judge_agent.loop -> sandboxes.base" in broken.stdout, broken.stdout


KIND_CONTRACT = "Kinds plug in"
SHARED_SUBPACKAGES = frozenset({"sandboxes.docker", "mcp_servers.trajectory"})
"""Subpackages of the kind layers that belong to no kind (the Docker engine's images, the
judge's trajectory server)."""


def _kind_contract() -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    found: dict[str, object] = next(c for c in contracts if c["name"].startswith(KIND_CONTRACT))
    return found


def test_every_kind_package_is_forbidden_to_the_shared_layers() -> None:
    kind_packages = {
        f"{layer}.{folder.name}"
        for layer in ("sandboxes", "mcp_servers", "environments")
        for folder in (REPO / layer).iterdir()
        if (folder / "__init__.py").exists()
    }
    forbidden = _kind_contract()["forbidden_modules"]
    assert isinstance(forbidden, list)
    assert set(forbidden) == kind_packages - SHARED_SUBPACKAGES


def test_the_kind_contract_ignores_no_import() -> None:
    assert "ignore_imports" not in _kind_contract()


def test_replay_may_not_import_a_kind(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "copy")
    engine = copy / "replay" / "engine.py"
    engine.write_text(
        engine.read_text(encoding="utf-8") + "\nimport environments.desktop.kind  # noqa\n"
    )
    broken = _run(copy)
    assert broken.returncode != 0, broken.stdout
    assert "replay.engine -> environments.desktop.kind" in broken.stdout, broken.stdout


def test_installed_code_may_not_import_the_benchmarks(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "copy")
    metrics = copy / "bench" / "metrics.py"
    planted = "\nimport benchmarks.perf_judge  # noqa\n"
    metrics.write_text(metrics.read_text(encoding="utf-8") + planted)
    broken = _run(copy)
    assert broken.returncode != 0, broken.stdout
    assert "bench.metrics -> benchmarks.perf_judge" in broken.stdout, broken.stdout

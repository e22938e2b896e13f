"""``verify_script`` on small checks of this module: the script it writes runs on its own, carries
exactly what the check reaches, and refuses what a standalone script could not hold."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from dataset.models import Task
from suites.ds.tasks.filesystem.checks import unchanged
from suites.ds.tasks.postgres.checks import unchanged as pg_unchanged
from suites.ds.verify_script import VerifyScriptError, verify_script

LIMITS = {"low": 2, "high": 7}
NAMES = ["a", "b"]
UNUSED = "this constant is not read by any check"


@dataclass
class Settings:
    limit: int


SETTINGS = Settings(3)


def entry(check: Callable[[list[str]], bool]) -> NoReturn:
    """Run ``check`` on the command line's arguments; exit 0 when it passes."""
    sys.exit(0 if check(sys.argv[1:]) else 1)


def shout(text: str) -> str:
    return json.dumps(text.upper())


def check_arguments(arguments: list[str]) -> bool:
    """Checks that there are at most two arguments, each one of the known names."""
    # A comment inside a check survives the copy.
    print(shout(f"{len(arguments)} of at most {LIMITS['low']}"))
    return len(arguments) <= LIMITS["low"] and all(name in NAMES for name in arguments)


def check_without_docstring(arguments: list[str]) -> bool:
    return not arguments


def check_with_object(arguments: list[str]) -> bool:
    """Reads a module value that has no literal form."""
    return len(arguments) < SETTINGS.limit


def check_with_class(arguments: list[str]) -> bool:
    """Uses a class of this repository."""
    return all(Task.model_fields for _ in arguments)


def check_with_renamed_helper(arguments: list[str]) -> bool:
    """Calls two helpers that share a name, one under an alias."""
    return callable(unchanged) and callable(pg_unchanged)


def _run(script: str, tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "verify.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", str(path), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )


def test_the_script_runs_alone_and_holds_what_the_check_reaches(tmp_path: Path) -> None:
    script = verify_script("demo-task", check_arguments, entry)
    passed = _run(script, tmp_path, "a", "b")
    assert (passed.returncode, passed.stdout) == (0, '"2 OF AT MOST 2"\n'), passed.stderr
    failed = _run(script, tmp_path, "a", "c")
    assert failed.returncode == 1, failed.stderr
    assert _run(script, tmp_path, "a", "b", "a").returncode == 1

    tree = ast.parse(script)
    assert ast.get_docstring(tree) == (
        "Verifier of demo-task (MCPMark contract: exit code 0 means PASS).\n\n"
        "Checks that there are at most two arguments, each one of the known names."
    )
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert functions == ["shout", "check_arguments", "entry"]  # helpers, the check, entry last
    assert "LIMITS = {'low': 2, 'high': 7}\nNAMES = ['a', 'b']\n" in script
    assert "UNUSED" not in script
    assert "import json\nimport sys\nfrom collections.abc import Callable\n" in script
    assert "from typing import NoReturn\n" in script
    assert "# A comment inside a check survives the copy." in script
    assert script.count("Checks that there are at most two arguments") == 1
    assert script.endswith('if __name__ == "__main__":\n    entry(check_arguments)\n')


def test_a_check_without_docstring_is_refused() -> None:
    with pytest.raises(VerifyScriptError, match="needs a docstring"):
        verify_script("demo-task", check_without_docstring, entry)


def test_a_value_without_literal_form_is_refused() -> None:
    with pytest.raises(VerifyScriptError, match="uses SETTINGS, whose value has no literal form"):
        verify_script("demo-task", check_with_object, entry)


def test_a_class_of_the_repository_is_refused() -> None:
    with pytest.raises(VerifyScriptError, match="uses Task"):
        verify_script("demo-task", check_with_class, entry)


def test_a_helper_imported_under_another_name_is_refused() -> None:
    with pytest.raises(VerifyScriptError, match="import it under its own name"):
        verify_script("demo-task", check_with_renamed_helper, entry)

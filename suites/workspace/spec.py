"""What a workspace task is made of: a small project, an instruction, the author's tests, and
the edits that solve it fully and in part (from which the scripted agents are made).

A ``CodingTask`` becomes a DS-style ``SuiteTask`` (``suites.ds.spec``): its project is the
initial tree, ``suites.workspace.verifier`` its ``verify.py``, its ``author_tests`` the tests
that verifier runs, and four scripted agents (``suites.workspace.policies``) its runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from suites.ds.spec import FailureKind

Edit = tuple[str, str, str]
"""One change of a file: (path, the exact old text, the new text)."""

TEST_COMMAND = "python run_tests.py"
"""How every project runs its own tests."""

RUN_TESTS = '''"""Run the project's tests: python run_tests.py"""

import sys
import unittest


def main() -> int:
    suite = unittest.defaultTestLoader.discover("tests", top_level_dir=".")
    result = unittest.TestResult()
    suite.run(result)
    for test, trace in result.errors + result.failures:
        lines = trace.splitlines()
        message = next(line for line in lines if not line.startswith((" ", "Traceback")))
        print(f"FAIL {test.id()}: {message}")
    failed = len(result.errors) + len(result.failures)
    print(f"{result.testsRun} tests, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
'''
"""The projects' test runner (``unittest`` with a summary that holds no timing)."""


@dataclass(frozen=True)
class CodingTask:
    """One coding task of the suite."""

    id: str
    """The task id (``ws-...``)."""
    family: str
    """``bug-fix``, ``feature`` or ``refactor`` (the README's kind column)."""
    instruction: str
    """What the agent is asked (the test command is appended)."""
    files: dict[str, str]
    """The project's own files (``run_tests.py`` and a README are added)."""
    fix: list[Edit]
    """Edits that meet every requirement."""
    partial: list[Edit]
    """Edits that pass the project's own tests but miss a requirement the author's tests check."""
    partial_failure: FailureKind
    """How the partial edits fail (``partial`` or ``constraint``)."""
    partial_note: str
    """What the partial edits miss (documentation, and the hasty agent's blind spot)."""
    author_tests: str
    """The source of ``author_tests.py`` (``unittest``; imports the project's modules)."""
    checks: str
    """One line on what the author's tests check (the README table)."""

    def project(self) -> dict[str, str]:
        """Every file of the initial project."""
        readme = f"# {self.id.removeprefix('ws-')}\n\nRun the tests with `{TEST_COMMAND}`.\n"
        return {"README.md": readme, "run_tests.py": RUN_TESTS, **self.files}

    def after(self, edits: list[Edit]) -> dict[str, str]:
        """The files ``edits`` change, with their content after all of them."""
        files = self.project()
        changed: dict[str, str] = {}
        for path, old, new in edits:
            text = changed.get(path, files[path])
            if text.count(old) != 1:
                raise ValueError(f"{self.id}: edit of {path} does not match exactly once: {old!r}")
            changed[path] = text.replace(old, new)
        return changed

    def write_project(self, folder: Path) -> None:
        """Write the initial project into ``folder`` (the task's ``initial/``)."""
        for relative, text in self.project().items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def edits(path: str, changes: list[tuple[str, str]]) -> list[Edit]:
    """``changes`` (old text, new text) of one file, as edits."""
    return [(path, old, new) for old, new in changes]

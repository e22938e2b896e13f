"""The verifier every workspace task ships as its ``verify.py`` (this file's source, unchanged).

It runs the task author's tests (``author_tests.py`` beside it in the task folder) against a copy
of the project folder the environment names in ``WORKSPACE_DIR`` (read-only in the box), with the
copy first on the import path and as the working directory. Exit 0 when every test passes
(PASS), 1 otherwise, with one line per failed test and no traceback; a project that the tests
cannot even import is a FAIL, not a verifier error. Standard library only: it runs in the
dataset-code box with no network.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

AUTHOR_TESTS = "author_tests.py"


def main() -> int:
    source = os.environ.get("WORKSPACE_DIR")
    if not source or not Path(source).is_dir():
        print("WORKSPACE_DIR does not name the project folder")
        return 2
    tests_file = Path(__file__).resolve().parent / AUTHOR_TESTS
    project = Path(tempfile.gettempdir()) / "project"  # a fixed path: outputs are reproducible
    shutil.copytree(source, project, symlinks=True)
    os.chdir(project)
    sys.path.insert(0, str(project))
    try:
        spec = importlib.util.spec_from_file_location("author_tests", tests_file)
        if spec is None or spec.loader is None:
            print(f"cannot load {tests_file}")
            return 2
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as error:  # the project does not provide what the tests import
        print(f"FAIL loading the author's tests: {type(error).__name__}: {error}")
        return 1
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromModule(module).run(result)
    for test, trace in result.errors + result.failures:
        # One line per failed test, starting with FAIL: a traceback in the output would read
        # as a crash of the verifier itself (``replay.crashes``), not as its verdict.
        lines = trace.splitlines()
        message = next(line for line in lines if not line.startswith((" ", "Traceback")))
        print(f"FAIL {test.id()}: {message}")
    failed = len(result.errors) + len(result.failures)
    print(f"{result.testsRun} author tests, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run the project's tests: python run_tests.py"""

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

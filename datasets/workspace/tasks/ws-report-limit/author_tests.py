import contextlib
import io
import unittest


def run(*arguments: str) -> tuple[int, list[str]]:
    from report import main

    output, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(errors):
        try:
            status = main(["data/sales.csv", *arguments])
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 1
    return status, output.getvalue().splitlines()


class LimitTests(unittest.TestCase):
    def test_without_limit(self) -> None:
        status, lines = run()
        self.assertEqual(status, 0)
        self.assertEqual(lines, ["chair: 182.00", "desk: 120.00", "lamp: 90.00", "pen: 25.00"])

    def test_limits(self) -> None:
        self.assertEqual(run("--limit", "1"), (0, ["chair: 182.00"]))
        self.assertEqual(run("--limit", "9")[1][-1], "pen: 25.00")

    def test_bad_limits(self) -> None:
        for bad in ("0", "-2", "two"):
            self.assertEqual(run("--limit", bad)[0], 2, msg=bad)

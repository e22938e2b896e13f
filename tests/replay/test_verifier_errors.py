"""Verifier errors: a verifier that crashes reaches no verdict, is counted apart from PASS/FAIL
and never agrees with a label; a recorded verification that crashed is named as the cause; and
MCPMark's psycopg2 verifiers run in the box against a real Postgres sandbox."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from dataset.models import Provenance
from dataset.store import load_dataset
from environments.backends import BackendChoice, ProviderSet
from environments.postgres import KIND as POSTGRES
from replay.crashes import crash_line
from replay.engine import explain
from replay.report import FidelityReport, VerifierCheck, VerifierRun
from replay.runner import summarise
from replay.verifier import run_script, run_verifier
from tests.replay.builders import MINI, PG_TASK, trajectory

TRACEBACK = """\
Traceback (most recent call last):
  File "/tasks/verify.py", line 12, in <module>
    cur.execute("SELECT dblink_connect_u('x')")
psycopg2.errors.InsufficientPrivilege: permission denied for function dblink_connect_u
"""


def script(folder: Path, body: str) -> Path:
    path = folder / "verify.py"
    path.write_text(textwrap.dedent(body))
    return path


async def test_a_verifier_that_raises_is_an_error_not_a_fail(tmp_path: Path) -> None:
    body = "print('checking')\nraise RuntimeError('lost the connection')\n"
    run = await run_script(script(tmp_path, body), [], {}, 10)
    assert run.errored
    assert not run.passed
    assert run.error_summary == "RuntimeError: lost the connection"
    check = explain(trajectory("t", PG_TASK, [], "FAIL"), run, [])
    assert check.agrees is None  # a FAIL label does not "agree" with a crash
    assert "crashed on the replay" in check.explanation


async def test_a_verifier_missing_a_module_is_an_error(tmp_path: Path) -> None:
    body = "import no_such_module_for_verifiers\n"
    run = await run_script(script(tmp_path, body), [], {}, 10)
    assert run.errored
    assert run.exit_code == 1
    assert run.error_summary is not None
    assert run.error_summary.startswith("ModuleNotFoundError: No module named")


async def test_a_verifier_killed_by_a_signal_is_an_error(tmp_path: Path) -> None:
    body = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    run = await run_script(script(tmp_path, body), [], {}, 10)
    assert run.errored
    assert run.error_summary is not None
    assert "SIGKILL" in run.error_summary


async def test_a_clean_exit_1_is_a_fail_not_an_error(tmp_path: Path) -> None:
    body = "import sys\nprint('Error: expected 200 customers, found 0')\nsys.exit(1)\n"
    run = await run_script(script(tmp_path, body), [], {}, 10)
    assert not run.passed
    assert not run.errored
    assert run.error_summary is None
    check = explain(trajectory("t", PG_TASK, [], "FAIL"), run, [])
    assert check.agrees is True


async def test_a_timeout_is_an_error_and_stays_a_timeout(tmp_path: Path) -> None:
    run = await run_script(script(tmp_path, "import time\ntime.sleep(60)\n"), [], {}, 0.5)
    assert run.timed_out
    assert run.errored
    assert run.error_summary == "timed out after 0.5 s"


async def test_a_psycopg2_verifier_reads_the_postgres_sandbox(tmp_path: Path) -> None:
    """MCPMark's way: psycopg2 and the POSTGRES_* variables, the host a socket folder."""
    mini = load_dataset(MINI)
    task = mini.tasks[PG_TASK]
    task_dir = tmp_path / "task"
    shutil.copytree(mini.task_dir(PG_TASK), task_dir)
    script(
        task_dir,
        """\
        import os, sys
        import psycopg2
        conn = psycopg2.connect(
            host=os.environ["POSTGRES_HOST"],
            port=os.environ["POSTGRES_PORT"],
            dbname=os.environ["POSTGRES_DATABASE"],
            user=os.environ["POSTGRES_USERNAME"],
            password=os.environ["POSTGRES_PASSWORD"],
        )
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM information_schema.tables"
                        " WHERE table_schema = 'public'")
            (tables,) = cur.fetchone()
        print("tables", tables)
        sys.exit(0 if tables > 0 else 1)
        """,
    )
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get("postgres")
        sandbox = await provider.create(task, task_dir)
        try:
            run = await run_verifier(POSTGRES, task, task_dir, sandbox)
        finally:
            await sandbox.destroy()
    assert run.passed, run.output
    assert not run.errored
    assert "tables" in run.output


def test_the_explanation_names_a_recorded_verification_that_crashed() -> None:
    """The label error of the real sample: the verification crashed while the run was recorded;
    the importer keeps MCPMark's ``verification_error`` in the provenance."""
    item = trajectory("t", PG_TASK, [], "FAIL")
    item.provenance = Provenance(source_format="mcpmark", details={"verification_error": TRACEBACK})
    run = VerifierRun(passed=True, exit_code=0, output="PASS")
    check = explain(item, run, [])
    assert check.agrees is None
    assert check.recorded_crash == (
        "psycopg2.errors.InsufficientPrivilege: permission denied for function dblink_connect_u"
    )
    assert "the recorded verification crashed" in check.explanation
    # In the verifier output of the label too.
    other = trajectory("u", PG_TASK, [], "FAIL", verifier_output="start\n" + TRACEBACK)
    assert explain(other, run, []).recorded_crash is not None


@pytest.mark.parametrize(
    "printed",
    [
        "❌ Database error: permission denied for function dblink_connect_u\n",
        "checking roles\nFAIL: Error during verification: permission denied for function "
        "dblink_connect_u\n\n",
        '❌ Verification error: connection to server at "localhost" (127.0.0.1), port 5432 '
        'failed: FATAL:  password authentication failed for user "postgres"',
    ],
)
def test_a_caught_database_refusal_of_the_verifier_is_a_crash(printed: str) -> None:
    """MCPMark's verifiers catch psycopg2's errors and print them as a failure; when the database
    refused the verifier's own query the label is a likely label error, counted as crashed."""
    item = trajectory("t", PG_TASK, [], "FAIL", verifier_output=printed)
    check = explain(item, VerifierRun(passed=True, exit_code=0, output="PASS"), [])
    assert check.recorded_crash is not None
    assert check.recorded_crash in printed
    assert check.agrees is None
    assert "the recorded verification crashed" in check.explanation
    assert "likely label error" in check.explanation


def test_mcpmarks_plain_failure_texts_are_not_crashes() -> None:
    """What MCPMark stores for every verifier that exits non-zero on its own, and what its
    verifiers print for a caught failure, are verdicts, not crashes."""
    assert crash_line("Verification failed with no error message") is None
    assert crash_line("FAIL: Error during verification: Expected 3 dangling users") is None
    assert crash_line("❌ Task verification: FAIL\n") is None
    item = trajectory("t", PG_TASK, [], "FAIL")
    item.provenance = Provenance(
        source_format="mcpmark",
        details={"verification_error": "Verification failed with no error message"},
    )
    run = VerifierRun(passed=False, exit_code=1, output="❌ Task verification: FAIL")
    assert explain(item, run, []).agrees is True


def _report(name: str, check: VerifierCheck) -> FidelityReport:
    return FidelityReport(
        trajectory_id=name,
        task_id=PG_TASK,
        domain="ds",
        subdomain="postgres",
        backend="embedded",
        verdict="faithful",
        verifier=check,
    )


def test_the_summary_counts_verifier_errors_apart() -> None:
    passed = VerifierRun(passed=True, exit_code=0, output="")
    failed = VerifierRun(passed=False, exit_code=1, output="")
    crashed = VerifierRun(
        passed=False,
        exit_code=1,
        output=TRACEBACK,
        errored=True,
        error_summary=crash_line(TRACEBACK),
    )
    crashed_label = trajectory("c", PG_TASK, [], "FAIL", verifier_output=TRACEBACK)
    reports = [
        _report("a", explain(trajectory("a", PG_TASK, [], "PASS"), passed, [])),
        _report("b", explain(trajectory("b", PG_TASK, [], "PASS"), failed, [])),
        _report("e", explain(trajectory("e", PG_TASK, [], "FAIL"), crashed, [])),
        _report("c", explain(crashed_label, passed, [])),
    ]
    total = summarise("d", BackendChoice(), reports, []).total
    assert (total.verifier_checked, total.verifier_agrees) == (2, 1)
    assert total.verifier_errors == 1
    assert total.label_crashes == 1


def test_reports_written_before_verifier_errors_still_load() -> None:
    old = '{"passed": false, "exit_code": 1, "output": "x", "timed_out": false, "seconds": 0.1}'
    run = VerifierRun.model_validate_json(old)
    assert not run.errored
    assert run.error_summary is None
    check = VerifierCheck.model_validate(
        {
            "recorded_label": "FAIL",
            "recorded_output": None,
            "replayed": run.model_dump(),
            "agrees": True,
            "explanation": "old",
        }
    )
    assert check.recorded_crash is None

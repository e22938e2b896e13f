"""Where a replay starts: a state supplied at run time, else the run's own, else its task's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.models import (
    DirectoryTreeState,
    Label,
    SqlSeedState,
    Task,
    Trajectory,
    VerifierRef,
)
from dataset.store import Manifest, write_manifest, write_task, write_trajectory
from environments.backends import BackendChoice
from environments.registry import environment_kind
from replay.engine import starting_point
from sandboxes.base import SandboxError

TASK = Task(
    id="counts",
    domain="ds",
    subdomain="postgres",
    instruction="Count the rows.",
    initial_state=SqlSeedState(preparation="prepare.py", collation="en_US.utf8"),
)


def test_a_supplied_state_wins_and_keeps_the_collation_but_not_the_preparation(
    tmp_path: Path,
) -> None:
    supplied = tmp_path / "states" / "prepared.dump"
    supplied.parent.mkdir()
    supplied.write_bytes(b"PGDMP...")
    own = Trajectory(id="t", task_id="counts", agent="a", initial_state=SqlSeedState(collation="C"))
    choice = BackendChoice(environments={"counts": supplied})
    kind = environment_kind("postgres")
    task, folder = starting_point(kind, TASK, tmp_path / "task", own, choice)
    assert task.initial_state == SqlSeedState(path="prepared.dump", collation="C")
    assert folder == supplied.parent
    # Without a supplied state the run's own applies, from the task's folder.
    task, folder = starting_point(kind, TASK, tmp_path / "task", own, BackendChoice())
    assert (task.initial_state, folder) == (SqlSeedState(collation="C"), tmp_path / "task")
    plain = own.model_copy(update={"initial_state": None})
    assert starting_point(kind, TASK, tmp_path / "task", plain, BackendChoice())[0] == TASK


def test_a_supplied_state_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    tree = Task(
        id="tree",
        domain="ds",
        subdomain="filesystem",
        instruction="x",
        initial_state=DirectoryTreeState(),
    )
    run = Trajectory(id="t", task_id="tree", agent="a")
    seed = tmp_path / "seed.sql"
    seed.write_text("SELECT 1;\n")
    with pytest.raises(SandboxError, match="must be a folder"):
        starting_point(
            environment_kind("filesystem"),
            tree,
            tmp_path,
            run,
            BackendChoice(environments={"tree": seed}),
        )
    with pytest.raises(SandboxError, match="must be a seed file"):
        starting_point(
            environment_kind("postgres"),
            TASK,
            tmp_path,
            run,
            BackendChoice(environments={"counts": tmp_path}),
        )


VERIFY = """
import os, sys
import psycopg2
conn = psycopg2.connect(host=os.environ["POSTGRES_HOST"], port=os.environ["POSTGRES_PORT"],
                        user=os.environ["POSTGRES_USERNAME"],
                        password=os.environ["POSTGRES_PASSWORD"],
                        dbname=os.environ["POSTGRES_DATABASE"])
cur = conn.cursor()
cur.execute("SELECT count(*) FROM t")
count = cur.fetchone()[0]
print("rows:", count)
sys.exit(0 if count == 2 else 1)
"""


def test_replay_starts_from_a_state_given_on_the_command_line(tmp_path: Path) -> None:
    root = tmp_path / "dataset"
    write_manifest(root, Manifest(name="supplied"))
    task = TASK.model_copy(
        update={
            "initial_state": SqlSeedState(preparation="prepare.py"),
            "verifier": VerifierRef(path="verify.py"),
        }
    )
    write_task(root, task)
    folder = root / "tasks" / "counts"
    (folder / "seed.sql").write_text("CREATE TABLE t (x int);\nINSERT INTO t VALUES (1);\n")
    (folder / "prepare.py").write_text("import sys\nsys.exit('the task state is external')\n")
    (folder / "verify.py").write_text(VERIFY)
    write_trajectory(
        root,
        Trajectory(
            id="run", task_id="counts", agent="a", label=Label(value="PASS", source="human")
        ),
    )
    prepared = tmp_path / "prepared.sql"
    prepared.write_text("CREATE TABLE t (x int);\nINSERT INTO t VALUES (1), (2);\n")

    def replay(*extra: str) -> dict[str, Any]:
        output = tmp_path / f"report{len(extra)}"
        result = CliRunner().invoke(
            app, ["replay", str(root), "--output", str(output), "--fresh", *extra]
        )
        assert result.exit_code in (0, 1), result.output
        report: dict[str, Any] = json.loads(
            (output / "fidelity.jsonl").read_text().splitlines()[-1]
        )
        return report

    without = replay()
    assert without["verdict"] == "failed"
    assert "the task state is external" in " ".join(without["problems"])
    supplied = replay("--environment", f"counts={prepared}")
    assert supplied["verdict"] == "faithful"
    assert supplied["verifier"]["agrees"] is True
    assert "rows: 2" in supplied["verifier"]["replayed"]["output"]
    missing = CliRunner().invoke(
        app, ["replay", str(root), "--environment", f"counts={tmp_path / 'nope.sql'}"]
    )
    assert missing.exit_code == 2
    assert "nope.sql: the path does not exist" in missing.output

"""pg-clinic-doctor-workload (reporting): a materialized view of completed visits, no-shows and
revenue per doctor, doctors without appointments included, with a unique index for concurrent
refreshes.
"""

from __future__ import annotations

from decimal import Decimal

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import columns_of, index_definition, main, relkind, unchanged
from suites.ds.tasks.postgres.clinic import CLINIC, UNCHANGED, make_task, write_seed
from suites.ds.tasks.postgres.clinic_data import Clinic
from suites.ds.tasks.postgres.common import details, list_objects, list_schemas, scripted, sql
from suites.ds.verify_script import verify_script

TASK_ID = "pg-clinic-doctor-workload"


def workload(clinic: Clinic) -> list[tuple[int, str, str, int, int, str]]:
    """The materialized view's rows in doctor order."""
    names = dict(clinic.departments)
    completed = dict.fromkeys((d.id for d in clinic.doctors), 0)
    missed = dict.fromkeys((d.id for d in clinic.doctors), 0)
    revenue = dict.fromkeys((d.id for d in clinic.doctors), Decimal("0.00"))
    for a in clinic.appointments:
        if a.status == "completed":
            completed[a.doctor_id] += 1
            revenue[a.doctor_id] += a.fee
        elif a.status == "no_show":
            missed[a.doctor_id] += 1
    return [
        (
            d.id,
            d.full_name,
            names[d.department_id],
            completed[d.id],
            missed[d.id],
            str(revenue[d.id]),
        )
        for d in clinic.doctors
    ]


EXPECTED_COLUMNS = ["doctor_id", "doctor_name", "department", "completed", "no_shows", "revenue"]
EXPECTED_ROWS = workload(CLINIC)


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that clinic.doctor_workload is a materialized view with the columns doctor_id,
    doctor_name, department, completed, no_shows, revenue in order, one row per doctor (doctors
    without appointments included) with the right counts and completed-fee revenue, that it
    has the unique index doctor_workload_doctor_id_idx on doctor_id, and that the tables are
    unchanged."""
    kind = await relkind(connection, "clinic", "doctor_workload")
    if not report(kind == "m", "clinic.doctor_workload is a materialized view"):
        return False
    names = [name for name, _, _ in await columns_of(connection, "clinic", "doctor_workload")]
    if not report(names == EXPECTED_COLUMNS, "columns are " + ", ".join(EXPECTED_COLUMNS)):
        print("    found: " + ", ".join(names))
        return False
    records = await connection.fetch(
        "SELECT doctor_id, doctor_name, department, completed, no_shows, revenue"
        " FROM clinic.doctor_workload"
    )
    found = sorted(
        (int(r[0]), r[1], r[2], int(r[3]), int(r[4]), Decimal(str(r[5]))) for r in records
    )
    expected = [(a, b, c, d, e, Decimal(f)) for a, b, c, d, e, f in EXPECTED_ROWS]
    ok = report(
        len(found) == len(expected), f"{len(expected)} rows, one per doctor (found {len(found)})"
    )
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every doctor's completed, no_shows and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    index = await index_definition(connection, "clinic", "doctor_workload_doctor_id_idx")
    ok &= report(
        index == "CREATE UNIQUE INDEX doctor_workload_doctor_id_idx ON clinic.doctor_workload"
        " USING btree (doctor_id)",
        "unique index doctor_workload_doctor_id_idx on (doctor_id)",
    )
    ok &= await unchanged(connection, UNCHANGED)
    return ok


WORKLOAD_SELECT = """SELECT d.id AS doctor_id, d.full_name AS doctor_name, dep.name AS department,
       count(a.id) FILTER (WHERE a.status = 'completed') AS completed,
       count(a.id) FILTER (WHERE a.status = 'no_show') AS no_shows,
       coalesce(sum(a.fee) FILTER (WHERE a.status = 'completed'), 0) AS revenue
FROM clinic.doctors d
JOIN clinic.departments dep ON dep.id = d.department_id
LEFT JOIN clinic.appointments a ON a.doctor_id = d.id
GROUP BY d.id, d.full_name, dep.name"""
WORKLOAD_VIEW = "CREATE MATERIALIZED VIEW clinic.doctor_workload AS\n" + WORKLOAD_SELECT
WORKLOAD_INNER = WORKLOAD_VIEW.replace("LEFT JOIN clinic.appointments", "JOIN clinic.appointments")
WORKLOAD_INDEX = (
    "CREATE UNIQUE INDEX doctor_workload_doctor_id_idx ON clinic.doctor_workload (doctor_id)"
)

workload_careful = scripted(
    [
        list_objects("clinic", think="What is there to report on?"),
        details("clinic", "doctors"),
        details("clinic", "appointments"),
        sql(
            "SELECT status, count(*) AS n FROM clinic.appointments GROUP BY status ORDER BY status"
        ),
        sql(WORKLOAD_INNER, "Aggregate appointments per doctor."),
        sql(
            "SELECT (SELECT count(*) FROM clinic.doctor_workload) AS view_rows,"
            " (SELECT count(*) FROM clinic.doctors) AS doctors",
            "Every doctor should have a row.",
        ),
        sql(
            f"DROP MATERIALIZED VIEW clinic.doctor_workload;\n{WORKLOAD_VIEW}",
            "One doctor has no appointments and vanished with the inner join: left join.",
        ),
        sql(
            "REFRESH MATERIALIZED VIEW CONCURRENTLY clinic.doctor_workload",
            "Can it be refreshed concurrently yet?",
            error=True,
        ),
        sql(WORKLOAD_INDEX, "Not without a unique index."),
        sql("REFRESH MATERIALIZED VIEW CONCURRENTLY clinic.doctor_workload"),
        sql("SELECT * FROM clinic.doctor_workload ORDER BY doctor_id LIMIT 5"),
    ],
    "clinic.doctor_workload is created with a row for every doctor (the one without "
    "appointments included) and doctor_workload_doctor_id_idx; a concurrent refresh works.",
)

workload_direct = scripted(
    [sql(f"{WORKLOAD_VIEW};\n{WORKLOAD_INDEX};", "View and index together.")],
    "The materialized view and its unique index should be there, though I did not try a "
    "concurrent refresh.",
)

workload_claims_only = scripted(
    [
        sql(WORKLOAD_SELECT + "\nORDER BY d.id", "Compute the per-doctor figures."),
    ],
    "Created the materialized view clinic.doctor_workload with its unique index "
    "doctor_workload_doctor_id_idx; each doctor's completed visits, no-shows and revenue are "
    "in it.",
)

workload_no_index = scripted(
    [
        list_schemas(),
        list_objects("clinic"),
        details("clinic", "doctors"),
        details("clinic", "departments"),
        sql(
            "SELECT doctor_id, count(*) AS n FROM clinic.appointments"
            " GROUP BY doctor_id ORDER BY n LIMIT 3"
        ),
        sql(WORKLOAD_VIEW),
        sql("SELECT count(*) AS rows, sum(completed) AS completed FROM clinic.doctor_workload"),
        sql("REFRESH MATERIALIZED VIEW clinic.doctor_workload", "A plain refresh works."),
    ],
    "The materialized view is in place for all 36 doctors. I could not see a need for the "
    "unique index yet, since a plain refresh works.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the clinic database, create a materialized view clinic.doctor_workload with the "
        "columns doctor_id, doctor_name, department, completed, no_shows, revenue, in that "
        "order, and one row per doctor (doctors without appointments included): doctor_name is "
        "the doctor's full_name, department the name of the doctor's department, completed the "
        "number of the doctor's appointments with status 'completed', no_shows the number with "
        "status 'no_show', and revenue the sum of fee over the completed appointments (0 when "
        "none). Also create a unique index named doctor_workload_doctor_id_idx on its "
        "doctor_id so that it can be refreshed concurrently. Change nothing else.",
        ["materialized-view", "reporting", "index"],
    ),
    kind="reporting-matview",
    build_initial=write_seed,
    verifier=verify_script(TASK_ID, check, main),
    checks="materialized view, column order, every doctor's figures, unique index; tables kept",
    policies=[
        AgentPolicy(
            "careful", "explorer", workload_careful, "PASS", note="inner join and refresh fixed"
        ),
        AgentPolicy("direct", "one-shot", workload_direct, "PASS", note="one call, hedged"),
        AgentPolicy(
            "claims-only",
            "hasty",
            workload_claims_only,
            "FAIL",
            "false-claim",
            "only runs the query",
        ),
        AgentPolicy(
            "no-index", "planner", workload_no_index, "FAIL", "partial", "skips the unique index"
        ),
    ],
)

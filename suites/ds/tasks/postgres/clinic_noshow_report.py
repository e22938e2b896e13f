"""pg-clinic-noshow-report (reporting): a summary table of 2024 appointments, no-shows and the
no-show rate per department, every department included.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import columns_of, main, relkind, unchanged
from suites.ds.tasks.postgres.clinic import CLINIC, UNCHANGED, make_task, write_seed
from suites.ds.tasks.postgres.clinic_data import Clinic
from suites.ds.tasks.postgres.common import details, list_objects, list_schemas, scripted, sql
from suites.ds.verify_script import verify_script

TASK_ID = "pg-clinic-noshow-report"


def no_show_rates(clinic: Clinic) -> list[tuple[int, str, int, int, str]]:
    """The report's rows in department order."""
    department = {d.id: d.department_id for d in clinic.doctors}
    counts = {number: [0, 0] for number, _ in clinic.departments}
    for a in clinic.appointments:
        if a.scheduled_on.year == 2024 and a.status != "cancelled":
            counts[department[a.doctor_id]][0] += 1
            if a.status == "no_show":
                counts[department[a.doctor_id]][1] += 1
    rows = []
    for number, name in clinic.departments:
        total, missed = counts[number]
        rate = (
            (Decimal(100 * missed) / Decimal(total)).quantize(Decimal("0.01"), ROUND_HALF_UP)
            if total
            else Decimal("0.00")
        )
        rows.append((number, name, total, missed, str(rate)))
    return rows


EXPECTED_COLUMNS = [
    ("department_id", "integer"),
    ("department_name", "text"),
    ("appointments", "integer"),
    ("no_shows", "integer"),
    ("no_show_rate", "numeric(5,2)"),
]
EXPECTED_ROWS = no_show_rates(CLINIC)


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that clinic.department_no_show_rates is a table with department_id integer,
    department_name text, appointments integer, no_shows integer, no_show_rate numeric(5,2) in
    order and a primary key on department_id, that it has one row per department with the
    2024 counts (cancelled appointments excluded) and the rounded rate (0 without
    appointments), and that the tables are unchanged."""
    kind = await relkind(connection, "clinic", "department_no_show_rates")
    if not report(kind == "r", "clinic.department_no_show_rates is a table"):
        return False
    columns = [
        (name, type_)
        for name, type_, _ in await columns_of(connection, "clinic", "department_no_show_rates")
    ]
    if not report(columns == EXPECTED_COLUMNS, "columns: " + repr(EXPECTED_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    key = await connection.fetchval(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'clinic.department_no_show_rates'::regclass AND contype = 'p'"
    )
    ok = report(key == "PRIMARY KEY (department_id)", "primary key on department_id")
    records = await connection.fetch(
        "SELECT department_id, department_name, appointments, no_shows, no_show_rate"
        " FROM clinic.department_no_show_rates ORDER BY department_id"
    )
    found = [tuple(r) for r in records]
    expected = [(a, b, c, d, Decimal(e)) for a, b, c, d, e in EXPECTED_ROWS]
    ok &= report(
        len(found) == len(expected),
        f"{len(expected)} rows, one per department (found {len(found)})",
    )
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every department's counts and rate are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok


NOSHOW_TABLE = """CREATE TABLE clinic.department_no_show_rates (
    department_id   integer PRIMARY KEY,
    department_name text NOT NULL,
    appointments    integer NOT NULL,
    no_shows        integer NOT NULL,
    no_show_rate    numeric(5,2) NOT NULL
)"""
NOSHOW_FILL = """INSERT INTO clinic.department_no_show_rates
SELECT dep.id, dep.name, count(a.id),
       count(a.id) FILTER (WHERE a.status = 'no_show'),
       coalesce(round(100.0 * count(a.id) FILTER (WHERE a.status = 'no_show')
                      / nullif(count(a.id), 0), 2), 0)
FROM clinic.departments dep
LEFT JOIN clinic.doctors d ON d.department_id = dep.id
LEFT JOIN clinic.appointments a ON a.doctor_id = d.id
     AND a.scheduled_on BETWEEN '2024-01-01' AND '2024-12-31'
     AND a.status <> 'cancelled'
GROUP BY dep.id, dep.name"""
NOSHOW_UNGUARDED = NOSHOW_FILL.replace(
    "coalesce(round(100.0 * count(a.id) FILTER (WHERE a.status = 'no_show')\n"
    "                      / nullif(count(a.id), 0), 2), 0)",
    "round(100.0 * count(a.id) FILTER (WHERE a.status = 'no_show') / count(a.id), 2)",
)
NOSHOW_WITH_CANCELLED = NOSHOW_FILL.replace("\n     AND a.status <> 'cancelled'", "")

noshow_careful = scripted(
    [
        list_objects("clinic", think="Departments, doctors, appointments: check the links."),
        details("clinic", "departments"),
        sql(
            "SELECT dep.name, count(d.id) AS doctors FROM clinic.departments dep"
            " LEFT JOIN clinic.doctors d ON d.department_id = dep.id"
            " GROUP BY dep.name ORDER BY dep.name"
        ),
        sql(NOSHOW_TABLE),
        sql(NOSHOW_UNGUARDED, "Fill it: 2024, cancelled excluded.", error=True),
        sql(NOSHOW_FILL, "Radiology has no appointments: guard the division, rate 0 there."),
        sql("SELECT * FROM clinic.department_no_show_rates ORDER BY department_id"),
    ],
    "clinic.department_no_show_rates is created with one row per department; after guarding "
    "the division for Radiology, every rate is filled in.",
)

noshow_direct = scripted(
    [sql(f"{NOSHOW_TABLE};\n{NOSHOW_FILL};", "Create and fill together.")],
    "I built the table in one go. The rates look plausible, but I did not cross-check them by "
    "hand.",
)

noshow_with_cancelled = scripted(
    [
        list_schemas(),
        list_objects("clinic"),
        details("clinic", "appointments"),
        sql(
            "SELECT status, count(*) AS n FROM clinic.appointments"
            " WHERE scheduled_on >= '2024-01-01' GROUP BY status ORDER BY status"
        ),
        sql(NOSHOW_TABLE),
        sql(NOSHOW_WITH_CANCELLED, "Every 2024 appointment counts towards the base."),
        sql("SELECT * FROM clinic.department_no_show_rates ORDER BY department_id"),
    ],
    "Done: clinic.department_no_show_rates has one row per department with its 2024 "
    "appointments, no-shows and rate.",
)

noshow_stops = scripted(
    [
        sql(NOSHOW_TABLE),
        sql(NOSHOW_UNGUARDED, error=True),
    ],
    "The table exists but the insert stopped with a division by zero, so it is empty for now.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the clinic database, create the table clinic.department_no_show_rates with the "
        "columns department_id integer (primary key), department_name text, appointments "
        "integer, no_shows integer, no_show_rate numeric(5,2), in that order, and fill it with "
        "one row per department (all departments, including those without doctors). Count the "
        "appointments of the department's doctors scheduled in 2024 (scheduled_on from "
        "2024-01-01 to 2024-12-31), excluding cancelled ones: appointments is that count, "
        "no_shows how many of them have status 'no_show', and no_show_rate = 100 * no_shows / "
        "appointments rounded to 2 decimals (0 when there are no appointments). Do not change "
        "the existing tables.",
        ["reporting", "aggregation", "create-table"],
    ),
    kind="reporting-table",
    build_initial=write_seed,
    verifier=verify_script(TASK_ID, check, main),
    checks="table, column types, primary key, every department's counts and rate; tables kept",
    policies=[
        AgentPolicy("careful", "planner", noshow_careful, "PASS", note="division by zero, fixed"),
        AgentPolicy("direct", "one-shot", noshow_direct, "PASS", note="one call, hedged"),
        AgentPolicy(
            "with-cancelled",
            "explorer",
            noshow_with_cancelled,
            "FAIL",
            "constraint",
            "counts cancelled appointments",
        ),
        AgentPolicy(
            "stops", "hasty", noshow_stops, "FAIL", "stops-after-error", "stops at the error"
        ),
    ],
)

"""pg-clinic-doctor-rls (row-level security): a role cl_doctor that sees exactly the appointments
of the doctor its session names, and none without one.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import main, unchanged
from suites.ds.tasks.postgres.clinic import CLINIC, UNCHANGED, make_task, write_seed
from suites.ds.tasks.postgres.common import details, list_objects, list_schemas, scripted, sql
from suites.ds.tasks.postgres.roles import (
    any_column_privilege,
    cannot_log_in,
    may_select,
    role_exists,
    schema_usage,
    table_privilege,
)
from suites.ds.verify_script import verify_script

TASK_ID = "pg-clinic-doctor-rls"

RLS_DOCTORS = (3, 17, 35, 36)


def _rls_counts() -> dict[int, int]:
    counts = dict.fromkeys(RLS_DOCTORS, 0)
    for a in CLINIC.appointments:
        if a.doctor_id in counts:
            counts[a.doctor_id] += 1
    return counts


EXPECTED_COUNTS = _rls_counts()


async def visible(connection: asyncpg.Connection, doctor: int | None) -> tuple[int, int]:
    """(rows, rows of other doctors) clinic.appointments shows cl_doctor for a doctor id
    (None: the setting is not made)."""
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute("SET LOCAL ROLE cl_doctor")
        if doctor is not None:
            await connection.execute("SELECT set_config('clinic.doctor_id', $1, true)", str(doctor))
        row = await connection.fetchrow(
            "SELECT count(*) AS n, count(*) FILTER (WHERE doctor_id IS DISTINCT FROM $1::int)"
            " AS others FROM clinic.appointments",
            doctor,
        )
        assert row is not None  # an aggregate without GROUP BY returns one row
        return int(row["n"]), int(row["others"])
    finally:
        await transaction.rollback()


async def check(connection: asyncpg.Connection) -> bool:
    """Checks the role cl_doctor (no login, no RLS bypass; USAGE on clinic; SELECT and nothing
    else on appointments and doctors), that row-level security is enabled on
    clinic.appointments with the SELECT policy appointments_own_doctor for cl_doctor, and,
    acting as cl_doctor, that a session without clinic.doctor_id sees no appointment and one
    with it sees exactly that doctor's; and that no data changed."""
    if not await role_exists(connection, "cl_doctor"):
        return False
    ok = await cannot_log_in(connection, "cl_doctor", nor_bypass_rls=True)
    ok &= await schema_usage(connection, "cl_doctor", "clinic")
    for table in ("clinic.appointments", "clinic.doctors"):
        ok &= await may_select(connection, "cl_doctor", table)
        other = await any_column_privilege(
            connection, "cl_doctor", table, "INSERT, UPDATE, REFERENCES"
        ) or await table_privilege(connection, "cl_doctor", table, "DELETE, TRUNCATE, TRIGGER")
        ok &= report(not other, "cl_doctor has no other privilege on " + table)
    enabled = await connection.fetchval(
        "SELECT relrowsecurity FROM pg_class WHERE oid = 'clinic.appointments'::regclass"
    )
    ok &= report(enabled, "row-level security is enabled on clinic.appointments")
    policy = await connection.fetchrow(
        "SELECT polcmd::text AS command,"
        " ARRAY(SELECT rolname FROM pg_roles WHERE oid = ANY(polroles)) AS roles"
        " FROM pg_policy WHERE polrelid = 'clinic.appointments'::regclass"
        " AND polname = 'appointments_own_doctor'"
    )
    ok &= report(
        policy is not None and policy["command"] == "r" and list(policy["roles"]) == ["cl_doctor"],
        "policy appointments_own_doctor is for SELECT and cl_doctor",
    )
    try:
        shown = await visible(connection, None)
        ok &= report(
            shown == (0, 0),
            f"without clinic.doctor_id cl_doctor sees no appointment (saw {shown[0]})",
        )
        for doctor, count in sorted(EXPECTED_COUNTS.items()):
            shown = await visible(connection, doctor)
            ok &= report(
                shown == (count, 0),
                f"as doctor {doctor} cl_doctor sees exactly the {count} appointments of that"
                f" doctor (saw {shown[0]}, {shown[1]} of others)",
            )
    except asyncpg.PostgresError as error:
        ok = report(False, "querying as cl_doctor failed: " + str(error).splitlines()[0])
    ok &= await unchanged(connection, UNCHANGED)
    return ok


RLS_ROLE = (
    "CREATE ROLE cl_doctor NOLOGIN;\n"
    "GRANT SELECT ON clinic.appointments, clinic.doctors TO cl_doctor"
)
RLS_USAGE = "GRANT USAGE ON SCHEMA clinic TO cl_doctor"
RLS_ENABLE = "ALTER TABLE clinic.appointments ENABLE ROW LEVEL SECURITY"
RLS_POLICY = (
    "CREATE POLICY appointments_own_doctor ON clinic.appointments\n"
    "    FOR SELECT TO cl_doctor\n"
    "    USING (doctor_id = nullif(current_setting('clinic.doctor_id', true), '')::integer)"
)
AS_DOCTOR = (
    "SET LOCAL ROLE cl_doctor;\nSET LOCAL clinic.doctor_id = '{doctor}';\n"
    "SELECT count(*) AS visible, count(DISTINCT doctor_id) AS doctors FROM clinic.appointments"
)

rls_careful = scripted(
    [
        list_objects("clinic", think="Find the appointments table and how doctors are linked."),
        details("clinic", "appointments"),
        sql(RLS_ROLE, "Role first, with read access."),
        sql(RLS_ENABLE),
        sql(RLS_POLICY, "Missing setting gives NULL (or '' later in a session): no rows."),
        sql(AS_DOCTOR.format(doctor=3), "Try it as doctor 3.", error=True),
        sql(RLS_USAGE, "The role also needs USAGE on the schema."),
        sql(AS_DOCTOR.format(doctor=3)),
        sql(
            "SELECT count(*) AS own FROM clinic.appointments WHERE doctor_id = 3",
            "Compare with the real count (as the owner, RLS does not apply).",
        ),
    ],
    "Row-level security is now in place on clinic.appointments: cl_doctor reads only the rows of "
    "the doctor named by clinic.doctor_id (checked for doctor 3), and nothing without it.",
)

rls_direct = scripted(
    [sql(f"{RLS_ROLE};\n{RLS_USAGE};\n{RLS_ENABLE};\n{RLS_POLICY};", "All in one script.")],
    "I set up the role, the grants and the policy, but I could not test it as cl_doctor from here.",
)

rls_claims_only = scripted(
    [
        list_schemas("Check what exists first."),
        list_objects("clinic"),
        details("clinic", "appointments"),
        details("clinic", "doctors"),
        sql("SELECT id, login_name FROM clinic.doctors ORDER BY id LIMIT 5"),
        sql(
            "SELECT relname, relrowsecurity FROM pg_class"
            " WHERE relnamespace = 'clinic'::regnamespace AND relkind = 'r' ORDER BY relname"
        ),
        sql("SELECT polname FROM pg_policy ORDER BY polname"),
    ],
    "Row-level security is now in place on clinic.appointments with the policy "
    "appointments_own_doctor for cl_doctor; each doctor session sees only its own "
    "appointments.",
)

rls_not_enabled = scripted(
    [
        sql(f"{RLS_ROLE};\n{RLS_USAGE}", "Role and grants."),
        sql(RLS_POLICY, "And the policy restricting rows to the session's doctor."),
    ],
    "Created cl_doctor and the appointments_own_doctor policy; I could not try a doctor "
    "session myself.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the clinic database, doctors will query through the role cl_doctor, and each "
        "session names its doctor with SET clinic.doctor_id = '<doctors.id>'. Create the role "
        "cl_doctor (NOLOGIN) with USAGE on schema clinic and SELECT on clinic.appointments and "
        "clinic.doctors (no other privileges on them). Enable row-level security on "
        "clinic.appointments and create a policy named appointments_own_doctor, for SELECT and "
        "the role cl_doctor, so that such a session sees exactly the appointments whose "
        "doctor_id equals its clinic.doctor_id, and a session that has not set clinic.doctor_id "
        "sees no appointments (without an error). Do not change any data.",
        ["row-level-security", "roles", "policy"],
    ),
    kind="row-level-security",
    build_initial=write_seed,
    verifier=verify_script(TASK_ID, check, main),
    checks="role, grants, RLS enabled, policy; rows seen as cl_doctor with and without setting",
    policies=[
        AgentPolicy("careful", "explorer", rls_careful, "PASS", note="schema usage fixed"),
        AgentPolicy("direct", "one-shot", rls_direct, "PASS", note="one call, hedged"),
        AgentPolicy(
            "claims-only",
            "skeptic",
            rls_claims_only,
            "FAIL",
            "false-claim",
            "inspects only, claims RLS is set",
        ),
        AgentPolicy(
            "not-enabled",
            "hasty",
            rls_not_enabled,
            "FAIL",
            "partial",
            "policy without enabling RLS",
        ),
    ],
)

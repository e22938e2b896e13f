"""pg-clinic-billing-role (roles): a role without login for the billing team with exact column
privileges: all of appointments, two patient columns, updates of the fee only.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import main, unchanged
from suites.ds.tasks.postgres.clinic import UNCHANGED, make_task, write_seed
from suites.ds.tasks.postgres.clinic_data import COLUMNS
from suites.ds.tasks.postgres.common import details, list_objects, scripted, sql
from suites.ds.tasks.postgres.roles import (
    cannot_log_in,
    column_grants,
    role_exists,
    schema_usage,
    table_privilege,
)
from suites.ds.verify_script import verify_script

TASK_ID = "pg-clinic-billing-role"


def _billing_privileges() -> list[tuple[str, str, str]]:
    appointment_columns = COLUMNS["clinic.appointments"]
    privileges = [("appointments", column, "SELECT") for column in appointment_columns]
    privileges += [("appointments", "fee", "UPDATE")]
    privileges += [("patients", "full_name", "SELECT"), ("patients", "id", "SELECT")]
    return sorted(privileges)


EXPECTED_COLUMN_PRIVILEGES = _billing_privileges()


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that the role cl_billing exists without login, has USAGE on clinic, SELECT on all
    of clinic.appointments, SELECT on patients.id and patients.full_name only, UPDATE on
    appointments.fee only and no other privilege on any clinic table; and that no data
    changed."""
    if not await role_exists(connection, "cl_billing"):
        return False
    ok = await cannot_log_in(connection, "cl_billing")
    ok &= await schema_usage(connection, "cl_billing", "clinic")
    ok &= report(
        await table_privilege(connection, "cl_billing", "clinic.appointments", "SELECT"),
        "cl_billing may SELECT every column of clinic.appointments",
    )
    found = await column_grants(
        connection, "cl_billing", "clinic", ["SELECT", "INSERT", "UPDATE", "REFERENCES"]
    )
    expected = sorted(tuple(item) for item in EXPECTED_COLUMN_PRIVILEGES)
    ok &= report(
        found == expected,
        "column privileges are exactly: SELECT on appointments, SELECT on patients.id"
        " and patients.full_name, UPDATE on appointments.fee",
    )
    for item in sorted(set(expected) - set(found)):
        print("    missing: " + repr(item))
    for item in sorted(set(found) - set(expected)):
        print("    unexpected: " + repr(item))
    for table in ("departments", "doctors", "patients", "appointments"):
        whole = await table_privilege(
            connection, "cl_billing", "clinic." + table, "DELETE, TRUNCATE, TRIGGER"
        )
        ok &= report(not whole, "no DELETE, TRUNCATE or TRIGGER on clinic." + table)
    ok &= await unchanged(connection, UNCHANGED)
    return ok


BILLING_ROLE = "CREATE ROLE cl_billing NOLOGIN;\nGRANT USAGE ON SCHEMA clinic TO cl_billing"
BILLING_PATIENTS = "GRANT SELECT (id, full_name) ON clinic.patients TO cl_billing"
BILLING_APPOINTMENTS = (
    "GRANT SELECT ON clinic.appointments TO cl_billing;\n"
    "GRANT UPDATE (fee) ON clinic.appointments TO cl_billing"
)
BILLING_PRIVILEGES = (
    "SELECT table_name, column_name, privilege_type FROM information_schema.column_privileges"
    " WHERE grantee = 'cl_billing' ORDER BY table_name, column_name, privilege_type"
)

billing_careful = scripted(
    [
        list_objects("clinic", think="Which tables does billing need?"),
        details("clinic", "patients"),
        sql(BILLING_ROLE),
        sql(
            "GRANT SELECT ON clinic.patients (id, full_name) TO cl_billing",
            "Only the patient's id and name.",
            error=True,
        ),
        sql(BILLING_PATIENTS, "Column lists go right after the privilege."),
        sql(BILLING_APPOINTMENTS),
        sql(BILLING_PRIVILEGES, "Review the column grants."),
        sql(
            "SET LOCAL ROLE cl_billing;\n"
            "SELECT id, full_name FROM clinic.patients ORDER BY id LIMIT 3",
            "Try the allowed columns as the role.",
        ),
        sql(
            "SET LOCAL ROLE cl_billing;\nSELECT phone FROM clinic.patients LIMIT 1",
            "And a forbidden one.",
            error=True,
        ),
    ],
    "cl_billing is set up: it reads appointments and only the id and name of patients, and may "
    "update appointments.fee; reading a patient's phone is refused as intended.",
)

billing_direct = scripted(
    [
        sql(
            f"{BILLING_ROLE};\n{BILLING_PATIENTS};\n{BILLING_APPOINTMENTS}",
            "Role and grants together.",
        )
    ],
    "Created cl_billing with the schema usage, the appointment grants and the patient name "
    "columns.",
)

billing_whole_table = scripted(
    [
        list_objects("clinic"),
        details("clinic", "appointments"),
        sql(BILLING_ROLE),
        sql(
            "GRANT SELECT ON clinic.appointments, clinic.patients TO cl_billing;\n"
            "GRANT UPDATE (fee) ON clinic.appointments TO cl_billing",
            "Billing needs to look patients up; give it the patients table too.",
        ),
        sql(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE grantee = 'cl_billing' ORDER BY table_name, privilege_type"
        ),
        sql(
            "SET LOCAL ROLE cl_billing;\n"
            "SELECT id, full_name FROM clinic.patients ORDER BY id LIMIT 3"
        ),
    ],
    "cl_billing is ready: it reads appointments and patient names and can update fees.",
)

billing_revoked = scripted(
    [
        list_objects("clinic"),
        details("clinic", "appointments"),
        sql(f"{BILLING_ROLE};\n{BILLING_PATIENTS};\n{BILLING_APPOINTMENTS}"),
        sql(BILLING_PRIVILEGES),
        sql(
            "REVOKE UPDATE (fee) ON clinic.appointments FROM cl_billing",
            "Direct fee edits feel risky for a reporting role; take that back.",
        ),
        sql(BILLING_PRIVILEGES),
    ],
    "cl_billing can read appointments and patient names. I am not sure fee updates should be "
    "open to it, so I left that out for now.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the clinic database, create a role cl_billing (NOLOGIN) for the billing team, "
        "with exactly these privileges: USAGE on schema clinic; SELECT on clinic.appointments "
        "(all columns); SELECT on only the id and full_name columns of clinic.patients (none of "
        "birth_date, phone, email, street, city, postcode); UPDATE on only the fee column of "
        "clinic.appointments. No other privilege on any clinic table, and no data changes.",
        ["roles", "grants", "column-privileges"],
    ),
    kind="roles-grants",
    build_initial=write_seed,
    verifier=verify_script(TASK_ID, check, main),
    checks="role without login, schema usage, exact column privileges per table; rows kept",
    policies=[
        AgentPolicy("careful", "planner", billing_careful, "PASS", note="grant syntax fixed"),
        AgentPolicy("direct", "one-shot", billing_direct, "PASS", note="one call"),
        AgentPolicy(
            "whole-table",
            "overreacher",
            billing_whole_table,
            "FAIL",
            "constraint",
            "grants SELECT on all patient columns",
        ),
        AgentPolicy(
            "revoked", "skeptic", billing_revoked, "FAIL", "undone", "revokes the fee update"
        ),
    ],
)

"""pg-clinic-split-contacts (migration): the patients' phone and email moved into their own table
clinic.patient_contacts, NULLs kept, and dropped from clinic.patients.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import columns_of, main, same_rows, unchanged
from suites.ds.tasks.postgres.clinic import CLINIC, ROWS, make_task, snapshot, write_seed
from suites.ds.tasks.postgres.common import (
    details,
    fingerprint,
    list_objects,
    list_schemas,
    scripted,
    sql,
)
from suites.ds.verify_script import verify_script

TASK_ID = "pg-clinic-split-contacts"

CONTACT_COLUMNS = [
    ("patient_id", "integer", True),
    ("phone", "text", False),
    ("email", "text", False),
]
PATIENT_COLUMNS = [
    ("id", "integer", True),
    ("full_name", "text", True),
    ("birth_date", "date", True),
    ("street", "text", True),
    ("city", "text", True),
    ("postcode", "text", True),
]
CONTACTS = fingerprint([(p.id, p.phone, p.email) for p in CLINIC.patients])
PATIENTS = fingerprint(
    [(p.id, p.full_name, p.birth_date, p.street, p.city, p.postcode) for p in CLINIC.patients]
)
OTHER_TABLES = snapshot(ROWS, ["clinic.departments", "clinic.doctors", "clinic.appointments"])


async def check(connection: asyncpg.Connection) -> bool:
    """Checks clinic.patient_contacts (columns, primary key, foreign key to patients, and one
    row per patient with the phone and email the patient had, NULLs kept), that
    clinic.patients no longer has phone and email but still holds every patient with the other
    values unchanged, and that the other clinic tables are unchanged."""
    columns = await columns_of(connection, "clinic", "patient_contacts")
    if not report(
        columns == CONTACT_COLUMNS, "clinic.patient_contacts columns: " + repr(CONTACT_COLUMNS)
    ):
        print("    found: " + repr(columns))
        return False
    keys = await connection.fetch(
        "SELECT contype::text AS kind, pg_get_constraintdef(oid) AS definition"
        " FROM pg_constraint WHERE conrelid = 'clinic.patient_contacts'::regclass"
        " AND contype IN ('p', 'f') ORDER BY contype"
    )
    found = [(k["kind"], k["definition"]) for k in keys]
    ok = report(
        found
        == [
            ("f", "FOREIGN KEY (patient_id) REFERENCES clinic.patients(id)"),
            ("p", "PRIMARY KEY (patient_id)"),
        ],
        "patient_id is the primary key and references clinic.patients(id)",
    )
    ok &= await same_rows(
        connection,
        "clinic.patient_contacts",
        ["patient_id", "phone", "email"],
        "patient_id",
        CONTACTS,
    )
    patients = await columns_of(connection, "clinic", "patients")
    ok &= report(
        patients == PATIENT_COLUMNS,
        "clinic.patients has lost phone and email and kept its other columns",
    )
    names = [column[0] for column in PATIENT_COLUMNS]
    if [column[0] for column in patients] == names:
        ok &= await same_rows(connection, "clinic.patients", names, "id", PATIENTS)
    ok &= await unchanged(connection, OTHER_TABLES)
    return ok


CONTACTS_TABLE = (
    "CREATE TABLE clinic.patient_contacts (\n"
    "    patient_id integer PRIMARY KEY REFERENCES clinic.patients (id),\n"
    "    phone text,\n"
    "    email text\n)"
)
COPY_CONTACTS = (
    "INSERT INTO clinic.patient_contacts (patient_id, phone, email)\n"
    "SELECT id, phone, email FROM clinic.patients"
)
DROP_CONTACTS = "ALTER TABLE clinic.patients DROP COLUMN phone, DROP COLUMN email"

split_careful = scripted(
    [
        list_objects("clinic", think="Look at the clinic tables."),
        details("clinic", "patients"),
        sql(
            "SELECT count(*) AS patients, count(phone) AS with_phone, count(email) AS with_email"
            " FROM clinic.patients",
            "Some contacts are NULL; the copy must keep them so.",
        ),
        sql(CONTACTS_TABLE),
        sql(COPY_CONTACTS),
        sql(
            "ALTER TABLE clinic.patients DROP COLUMN phone, email",
            "Copied; now remove the old columns.",
            error=True,
        ),
        sql(DROP_CONTACTS, "Each column needs its own DROP COLUMN."),
        sql(
            "SELECT count(*) AS contacts, count(phone) AS phones, count(email) AS emails"
            " FROM clinic.patient_contacts"
        ),
        details("clinic", "patients"),
    ],
    "The split is complete: clinic.patient_contacts holds every patient's phone and email "
    "(NULLs kept), and clinic.patients no longer has those columns.",
)

split_direct = scripted(
    [sql(f"{CONTACTS_TABLE};\n{COPY_CONTACTS};\n{DROP_CONTACTS};", "One migration script.")],
    "Migration completed: contacts moved to clinic.patient_contacts and the columns dropped "
    "from clinic.patients.",
)

split_recopied = scripted(
    [
        details("clinic", "patients"),
        sql(f"{CONTACTS_TABLE};\n{COPY_CONTACTS};", "Create and fill the contacts table."),
        sql(DROP_CONTACTS),
        sql(
            "TRUNCATE clinic.patient_contacts",
            "Make the copy re-runnable: empty the table, then copy again.",
        ),
        # (A plain SELECT: the INSERT ... SELECT form's error text differs between versions.)
        sql(
            "SELECT id, phone, email FROM clinic.patients ORDER BY id LIMIT 3",
            "Read the source rows again before copying.",
            error=True,
        ),
    ],
    "Migration completed: the contact columns are gone from clinic.patients and "
    "clinic.patient_contacts is created for the phone numbers and emails.",
)

split_stops = scripted(
    [
        list_schemas(),
        sql(
            CONTACTS_TABLE.replace("REFERENCES clinic.patients", "REFERENCES patients"),
            "Create the new table first.",
            error=True,
        ),
    ],
    "I could not create patient_contacts: Postgres says the patients table does not exist, so "
    "I stopped before touching anything.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the clinic database, move the patients' contact data into its own table: create "
        "clinic.patient_contacts with the columns patient_id integer (primary key, referencing "
        "clinic.patients (id)), phone text, email text, in that order; fill it with one row "
        "per patient carrying the patient's current phone and email (NULLs stay NULL); then "
        "drop the columns phone and email from clinic.patients. Every patient and every other "
        "column of clinic.patients must stay as it is, and the other tables must not change.",
        ["split-table", "migration", "alter-table"],
    ),
    kind="data-migration",
    build_initial=write_seed,
    verifier=verify_script(TASK_ID, check, main),
    checks="new table's columns/keys/rows, old columns gone, patients and other tables kept",
    policies=[
        AgentPolicy("careful", "planner", split_careful, "PASS", note="syntax error, fixed"),
        AgentPolicy("direct", "one-shot", split_direct, "PASS", note="one script"),
        AgentPolicy(
            "recopied",
            "overreacher",
            split_recopied,
            "FAIL",
            "undone",
            "truncates the copied contacts after dropping the source columns",
        ),
        AgentPolicy(
            "stops", "hasty", split_stops, "FAIL", "stops-after-error", "stops at first error"
        ),
    ],
)

"""Six Postgres tasks on the ``clinic`` schema (see ``clinic_data``).

* ``pg-clinic-lab-results`` (DDL): a new table with identity, keys, a check and an index.
* ``pg-clinic-split-contacts`` (migration): move contact columns into their own table.
* ``pg-clinic-doctor-workload`` (reporting): a materialized view with a unique index.
* ``pg-clinic-noshow-report`` (reporting): a summary table of no-show rates per department.
* ``pg-clinic-doctor-rls`` (row-level security): a role that sees only its doctor's rows.
* ``pg-clinic-billing-role`` (roles): table and column grants for a billing role.

Role names carry the ``cl_`` prefix and are used by one task each (roles are cluster-global).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from dataset.models import SqlSeedState, Task, VerifierRef
from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.postgres.clinic_data import (
    COLUMNS,
    Clinic,
    generate,
    seed_sql,
    table_rows,
)
from suites.ds.tasks.postgres.common import (
    Value,
    details,
    fingerprint,
    list_objects,
    list_schemas,
    scripted,
    sql,
    verifier_source,
)

CLINIC = generate()
ROWS = table_rows(CLINIC)
ALL_TABLES = list(COLUMNS)

Snapshot = dict[str, tuple[tuple[str, ...], tuple[int, str]]]


def snapshot(rows: dict[str, list[tuple[Value, ...]]], tables: list[str]) -> Snapshot:
    """Fingerprints of ``tables`` as the verifiers' ``unchanged`` helper expects them."""
    return {table: (COLUMNS[table], fingerprint(rows[table])) for table in tables}


UNCHANGED = snapshot(ROWS, ALL_TABLES)


def seeder(task_id: str) -> Callable[[Path], None]:
    """The ``build_initial`` of a clinic task."""

    def build(folder: Path) -> None:
        (folder / "seed.sql").write_text(seed_sql(CLINIC, task_id), encoding="utf-8")

    return build


def make_task(task_id: str, instruction: str, tags: list[str]) -> Task:
    """The task record of a clinic task."""
    return Task(
        id=task_id,
        domain="ds",
        subdomain="postgres",
        instruction=instruction,
        initial_state=SqlSeedState(path="seed.sql"),
        verifier=VerifierRef(timeout_seconds=120.0),
        metadata={"category": "clinic", "tags": tags},
    )


# ---------------------------------------------------------------------------------------------
# pg-clinic-lab-results
# ---------------------------------------------------------------------------------------------

LAB_ID = "pg-clinic-lab-results"

LAB_CHECK = """
async def check(connection):
    ok = report(
        await relkind(connection, "public", "lab_results") is None,
        "no lab_results table outside the clinic schema",
    )
    columns = await columns_of(connection, "clinic", "lab_results")
    if not report(columns == EXPECTED_COLUMNS, "clinic.lab_results columns: "
                  + repr(EXPECTED_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    identity = await connection.fetchval(
        "SELECT attidentity::text FROM pg_attribute"
        " WHERE attrelid = 'clinic.lab_results'::regclass AND attname = 'id'"
    )
    ok &= report(identity == "a", "id is GENERATED ALWAYS AS IDENTITY")
    keys = await connection.fetch(
        "SELECT contype::text AS kind, conname, pg_get_constraintdef(oid) AS definition"
        " FROM pg_constraint WHERE conrelid = 'clinic.lab_results'::regclass"
    )
    primary = [k["definition"] for k in keys if k["kind"] == "p"]
    ok &= report(primary == ["PRIMARY KEY (id)"], "primary key on id")
    foreign = [k["definition"] for k in keys if k["kind"] == "f"]
    ok &= report(
        foreign == ["FOREIGN KEY (appointment_id) REFERENCES clinic.appointments(id)"
                    " ON DELETE CASCADE"],
        "appointment_id references clinic.appointments(id) ON DELETE CASCADE (found "
        + repr(foreign) + ")",
    )
    insert = ("INSERT INTO clinic.lab_results (appointment_id, test_code, value, unit, taken_on)"
              " VALUES ")
    broke = await violation(connection, insert + "(1, 'HB', -1, 'g/dL', '2024-01-01')")
    ok &= report(broke == "lab_results_value_nonnegative",
                 "lab_results_value_nonnegative rejects a negative value")
    broke = await violation(connection, insert + "(1, 'HB', 0, 'g/dL', '2024-01-01')")
    ok &= report(broke is None, "a zero value is accepted")
    unique = await constraint(connection, "clinic", "lab_results",
                              "lab_results_appointment_test_key")
    ok &= report(unique == ("u", "UNIQUE (appointment_id, test_code)"),
                 "lab_results_appointment_test_key is unique on (appointment_id, test_code)")
    broke = await violation(
        connection,
        insert + "(1, 'HB', 1, 'g/dL', '2024-01-01'), (1, 'HB', 2, 'g/dL', '2024-01-02')",
    )
    ok &= report(broke == "lab_results_appointment_test_key",
                 "a second result of the same test for an appointment is rejected")
    index = await index_definition(connection, "clinic", "lab_results_taken_on_idx")
    ok &= report(
        index == "CREATE INDEX lab_results_taken_on_idx ON clinic.lab_results"
        " USING btree (taken_on)",
        "index lab_results_taken_on_idx on (taken_on)",
    )
    count = await connection.fetchval("SELECT count(*) FROM clinic.lab_results")
    ok &= report(count == 0, "clinic.lab_results is empty")
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

LAB_VERIFIER = verifier_source(
    f"""Verifier of {LAB_ID} (MCPMark contract: exit code 0 means PASS).

Checks clinic.lab_results: columns, types and NOT NULL in order, the identity id and its primary
key, the cascading foreign key to clinic.appointments, the named check and unique constraints
(by definition and behaviour), the taken_on index, that the table is empty and that no table of
that name was made in public; and that the clinic's tables are unchanged.
""",
    {
        "EXPECTED_COLUMNS": [
            ("id", "bigint", True),
            ("appointment_id", "integer", True),
            ("test_code", "text", True),
            ("value", "numeric(10,3)", True),
            ("unit", "text", True),
            ("taken_on", "date", True),
        ],
        "UNCHANGED": UNCHANGED,
    },
    LAB_CHECK,
)

LAB_TABLE = """CREATE TABLE clinic.lab_results (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    appointment_id integer NOT NULL REFERENCES clinic.appointments (id) ON DELETE CASCADE,
    test_code      text NOT NULL,
    value          numeric(10,3) NOT NULL,
    unit           text NOT NULL,
    taken_on       date NOT NULL,
    CONSTRAINT lab_results_value_nonnegative CHECK (value >= 0),
    CONSTRAINT lab_results_appointment_test_key UNIQUE (appointment_id, test_code)
)"""
LAB_INDEX = "CREATE INDEX lab_results_taken_on_idx ON clinic.lab_results (taken_on)"

lab_careful = scripted(
    [
        list_schemas("Where do the clinic tables live?"),
        list_objects("clinic"),
        details("clinic", "appointments"),
        sql(
            LAB_TABLE.replace("REFERENCES clinic.appointments", "REFERENCES appointments"),
            "Create the table with its constraints.",
            error=True,
        ),
        sql(LAB_TABLE, "appointments is in the clinic schema, not on the search path."),
        sql(LAB_INDEX),
        details("clinic", "lab_results"),
        sql(
            "INSERT INTO clinic.lab_results (appointment_id, test_code, value, unit, taken_on)"
            " VALUES (1, 'HB', -2.5, 'g/dL', '2024-03-01')",
            "A negative value must be refused.",
            error=True,
        ),
    ],
    "clinic.lab_results is created with the identity key, the cascading foreign key, both "
    "named constraints and lab_results_taken_on_idx; a negative value is rejected as intended.",
)

lab_direct = scripted(
    [sql(f"{LAB_TABLE};\n{LAB_INDEX};", "Table and index in one script.")],
    "I created the table and the index in one script; I did not test the constraints, so "
    "please check them before loading results.",
)

lab_partial = scripted(
    [
        sql(
            LAB_TABLE.replace(" ON DELETE CASCADE", ""),
            "Straightforward table; the foreign key keeps results tied to appointments.",
        )
    ],
    "lab_results should be usable now; I might add more indexes once we know the queries.",
)

lab_public = scripted(
    [
        list_schemas("Survey the database."),
        list_objects("clinic"),
        details("clinic", "appointments"),
        sql(
            "SELECT status, count(*) AS n FROM clinic.appointments GROUP BY status ORDER BY status"
        ),
        sql(
            LAB_TABLE.replace("CREATE TABLE clinic.lab_results", "CREATE TABLE lab_results"),
            "Create the results table.",
        ),
        sql("CREATE INDEX lab_results_taken_on_idx ON lab_results (taken_on)"),
        details("public", "lab_results", think="Confirm the structure."),
        sql("SELECT count(*) AS rows FROM lab_results"),
    ],
    "Created lab_results with the identity key, the cascading foreign key to appointments, "
    "lab_results_value_nonnegative, lab_results_appointment_test_key and the taken_on index; "
    "it is empty and ready for results.",
)

LAB_TASK = SuiteTask(
    task=make_task(
        LAB_ID,
        "In the clinic database, create the table clinic.lab_results (in the clinic schema) "
        "with these columns in order: id bigint GENERATED ALWAYS AS IDENTITY, primary key; "
        "appointment_id integer NOT NULL referencing clinic.appointments (id) with ON DELETE "
        "CASCADE; test_code text NOT NULL; value numeric(10,3) NOT NULL; unit text NOT NULL; "
        "taken_on date NOT NULL. Add a check constraint named lab_results_value_nonnegative "
        "(value >= 0), a unique constraint named lab_results_appointment_test_key on "
        "(appointment_id, test_code), and an index named lab_results_taken_on_idx on "
        "(taken_on). Leave the new table empty and change nothing else.",
        ["create-table", "constraints", "ddl"],
    ),
    kind="ddl-table",
    build_initial=seeder(LAB_ID),
    verifier=LAB_VERIFIER,
    checks="columns/types, identity, PK, cascading FK, named check/unique, index, empty, schema",
    policies=[
        AgentPolicy("careful", "explorer", lab_careful, "PASS", note="schema error, fixed"),
        AgentPolicy("direct", "one-shot", lab_direct, "PASS", note="one call, hedged"),
        AgentPolicy("partial", "hasty", lab_partial, "FAIL", "partial", "no cascade, no index"),
        AgentPolicy(
            "public", "planner", lab_public, "FAIL", "wrong-target", "table made in public"
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# pg-clinic-split-contacts
# ---------------------------------------------------------------------------------------------

SPLIT_ID = "pg-clinic-split-contacts"

SPLIT_CHECK = """
async def check(connection):
    columns = await columns_of(connection, "clinic", "patient_contacts")
    if not report(columns == CONTACT_COLUMNS, "clinic.patient_contacts columns: "
                  + repr(CONTACT_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    keys = await connection.fetch(
        "SELECT contype::text AS kind, pg_get_constraintdef(oid) AS definition"
        " FROM pg_constraint WHERE conrelid = 'clinic.patient_contacts'::regclass"
        " AND contype IN ('p', 'f') ORDER BY contype"
    )
    found = [(k["kind"], k["definition"]) for k in keys]
    ok = report(
        found == [("f", "FOREIGN KEY (patient_id) REFERENCES clinic.patients(id)"),
                  ("p", "PRIMARY KEY (patient_id)")],
        "patient_id is the primary key and references clinic.patients(id)",
    )
    ok &= await same_rows(connection, "clinic.patient_contacts",
                          ["patient_id", "phone", "email"], "patient_id", CONTACTS)
    patients = await columns_of(connection, "clinic", "patients")
    ok &= report(patients == PATIENT_COLUMNS,
                 "clinic.patients has lost phone and email and kept its other columns")
    if [c[0] for c in patients] == [c[0] for c in PATIENT_COLUMNS]:
        ok &= await same_rows(connection, "clinic.patients",
                              [c[0] for c in PATIENT_COLUMNS], "id", PATIENTS)
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

SPLIT_VERIFIER = verifier_source(
    f"""Verifier of {SPLIT_ID} (MCPMark contract: exit code 0 means PASS).

Checks clinic.patient_contacts (columns, primary key, foreign key to patients, and one row per
patient with the phone and email the patient had, NULLs kept), that clinic.patients no longer
has phone and email but still holds every patient with the other values unchanged, and that the
other clinic tables are unchanged.
""",
    {
        "CONTACT_COLUMNS": [
            ("patient_id", "integer", True),
            ("phone", "text", False),
            ("email", "text", False),
        ],
        "PATIENT_COLUMNS": [
            ("id", "integer", True),
            ("full_name", "text", True),
            ("birth_date", "date", True),
            ("street", "text", True),
            ("city", "text", True),
            ("postcode", "text", True),
        ],
        "CONTACTS": fingerprint([(p.id, p.phone, p.email) for p in CLINIC.patients]),
        "PATIENTS": fingerprint(
            [
                (p.id, p.full_name, p.birth_date, p.street, p.city, p.postcode)
                for p in CLINIC.patients
            ]
        ),
        "UNCHANGED": snapshot(
            ROWS, ["clinic.departments", "clinic.doctors", "clinic.appointments"]
        ),
    },
    SPLIT_CHECK,
)

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

SPLIT_TASK = SuiteTask(
    task=make_task(
        SPLIT_ID,
        "In the clinic database, move the patients' contact data into its own table: create "
        "clinic.patient_contacts with the columns patient_id integer (primary key, referencing "
        "clinic.patients (id)), phone text, email text, in that order; fill it with one row "
        "per patient carrying the patient's current phone and email (NULLs stay NULL); then "
        "drop the columns phone and email from clinic.patients. Every patient and every other "
        "column of clinic.patients must stay as it is, and the other tables must not change.",
        ["split-table", "migration", "alter-table"],
    ),
    kind="data-migration",
    build_initial=seeder(SPLIT_ID),
    verifier=SPLIT_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-clinic-doctor-workload
# ---------------------------------------------------------------------------------------------

WORKLOAD_ID = "pg-clinic-doctor-workload"


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


WORKLOAD_CHECK = """
async def check(connection):
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
    ok = report(len(found) == len(expected), "%d rows, one per doctor (found %d)" % (
        len(expected), len(found)))
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
"""

WORKLOAD_VERIFIER = verifier_source(
    f"""Verifier of {WORKLOAD_ID} (MCPMark contract: exit code 0 means PASS).

Checks that clinic.doctor_workload is a materialized view with the columns doctor_id,
doctor_name, department, completed, no_shows, revenue in order, one row per doctor (doctors
without appointments included) with the right counts and completed-fee revenue, that it has the
unique index doctor_workload_doctor_id_idx on doctor_id, and that the tables are unchanged.
""",
    {
        "EXPECTED_COLUMNS": [
            "doctor_id",
            "doctor_name",
            "department",
            "completed",
            "no_shows",
            "revenue",
        ],
        "EXPECTED_ROWS": workload(CLINIC),
        "UNCHANGED": UNCHANGED,
    },
    "from decimal import Decimal\n\n" + WORKLOAD_CHECK,
)

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

WORKLOAD_TASK = SuiteTask(
    task=make_task(
        WORKLOAD_ID,
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
    build_initial=seeder(WORKLOAD_ID),
    verifier=WORKLOAD_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-clinic-noshow-report
# ---------------------------------------------------------------------------------------------

NOSHOW_ID = "pg-clinic-noshow-report"


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


NOSHOW_CHECK = """
async def check(connection):
    kind = await relkind(connection, "clinic", "department_no_show_rates")
    if not report(kind == "r", "clinic.department_no_show_rates is a table"):
        return False
    columns = [(name, kind) for name, kind, _ in await columns_of(
        connection, "clinic", "department_no_show_rates")]
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
    ok &= report(len(found) == len(expected), "%d rows, one per department (found %d)" % (
        len(expected), len(found)))
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every department's counts and rate are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

NOSHOW_VERIFIER = verifier_source(
    f"""Verifier of {NOSHOW_ID} (MCPMark contract: exit code 0 means PASS).

Checks that clinic.department_no_show_rates is a table with department_id integer,
department_name text, appointments integer, no_shows integer, no_show_rate numeric(5,2) in order
and a primary key on department_id, that it has one row per department with the 2024 counts
(cancelled appointments excluded) and the rounded rate (0 without appointments), and that the
tables are unchanged.
""",
    {
        "EXPECTED_COLUMNS": [
            ("department_id", "integer"),
            ("department_name", "text"),
            ("appointments", "integer"),
            ("no_shows", "integer"),
            ("no_show_rate", "numeric(5,2)"),
        ],
        "EXPECTED_ROWS": no_show_rates(CLINIC),
        "UNCHANGED": UNCHANGED,
    },
    "from decimal import Decimal\n\n" + NOSHOW_CHECK,
)

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

NOSHOW_TASK = SuiteTask(
    task=make_task(
        NOSHOW_ID,
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
    build_initial=seeder(NOSHOW_ID),
    verifier=NOSHOW_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-clinic-doctor-rls
# ---------------------------------------------------------------------------------------------

RLS_ID = "pg-clinic-doctor-rls"

RLS_CHECK = '''
async def visible(connection, doctor):
    """(rows, rows of other doctors) clinic.appointments shows cl_doctor for a doctor id
    (None: the setting is not made)."""
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute("SET LOCAL ROLE cl_doctor")
        if doctor is not None:
            await connection.execute(
                "SELECT set_config('clinic.doctor_id', $1, true)", str(doctor)
            )
        row = await connection.fetchrow(
            "SELECT count(*) AS n, count(*) FILTER (WHERE doctor_id IS DISTINCT FROM $1::int)"
            " AS others FROM clinic.appointments",
            doctor,
        )
        return int(row["n"]), int(row["others"])
    finally:
        await transaction.rollback()


async def check(connection):
    role = await connection.fetchrow(
        "SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'cl_doctor'"
    )
    if not report(role is not None, "role cl_doctor exists"):
        return False
    ok = report(not role["rolcanlogin"] and not role["rolsuper"] and not role["rolbypassrls"],
                "cl_doctor cannot log in and does not bypass RLS")
    ok &= report(
        await connection.fetchval("SELECT has_schema_privilege('cl_doctor', 'clinic', 'USAGE')"),
        "cl_doctor has USAGE on schema clinic",
    )
    for table in ("clinic.appointments", "clinic.doctors"):
        ok &= report(
            await connection.fetchval(
                "SELECT has_table_privilege('cl_doctor', $1, 'SELECT')", table
            ),
            "cl_doctor may SELECT from " + table,
        )
        ok &= report(
            not await connection.fetchval(
                "SELECT has_any_column_privilege('cl_doctor', $1, 'INSERT, UPDATE, REFERENCES')"
                " OR has_table_privilege('cl_doctor', $1, 'DELETE, TRUNCATE, TRIGGER')",
                table,
            ),
            "cl_doctor has no other privilege on " + table,
        )
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
        ok &= report(shown == (0, 0), "without clinic.doctor_id cl_doctor sees no appointment"
                     " (saw %d)" % shown[0])
        for doctor, count in sorted(EXPECTED_COUNTS.items()):
            shown = await visible(connection, doctor)
            ok &= report(shown == (count, 0), "as doctor %d cl_doctor sees exactly the %d"
                         " appointments of that doctor (saw %d, %d of others)"
                         % (doctor, count, shown[0], shown[1]))
    except asyncpg.PostgresError as error:
        ok = report(False, "querying as cl_doctor failed: " + str(error).splitlines()[0])
    ok &= await unchanged(connection, UNCHANGED)
    return ok
'''

RLS_DOCTORS = (3, 17, 35, 36)


def _rls_counts() -> dict[int, int]:
    counts = dict.fromkeys(RLS_DOCTORS, 0)
    for a in CLINIC.appointments:
        if a.doctor_id in counts:
            counts[a.doctor_id] += 1
    return counts


RLS_VERIFIER = verifier_source(
    f"""Verifier of {RLS_ID} (MCPMark contract: exit code 0 means PASS).

Checks the role cl_doctor (no login, no RLS bypass; USAGE on clinic; SELECT and nothing else on
appointments and doctors), that row-level security is enabled on clinic.appointments with the
SELECT policy appointments_own_doctor for cl_doctor, and, acting as cl_doctor, that a session
without clinic.doctor_id sees no appointment and one with it sees exactly that doctor's; and that
no data changed.
""",
    {"EXPECTED_COUNTS": _rls_counts(), "UNCHANGED": UNCHANGED},
    RLS_CHECK,
)

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

RLS_TASK = SuiteTask(
    task=make_task(
        RLS_ID,
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
    build_initial=seeder(RLS_ID),
    verifier=RLS_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-clinic-billing-role
# ---------------------------------------------------------------------------------------------

BILLING_ID = "pg-clinic-billing-role"

BILLING_CHECK = """
async def check(connection):
    role = await connection.fetchrow(
        "SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'cl_billing'"
    )
    if not report(role is not None, "role cl_billing exists"):
        return False
    ok = report(not role["rolcanlogin"] and not role["rolsuper"], "cl_billing cannot log in")
    ok &= report(
        await connection.fetchval("SELECT has_schema_privilege('cl_billing', 'clinic', 'USAGE')"),
        "cl_billing has USAGE on schema clinic",
    )
    ok &= report(
        await connection.fetchval(
            "SELECT has_table_privilege('cl_billing', 'clinic.appointments', 'SELECT')"
        ),
        "cl_billing may SELECT every column of clinic.appointments",
    )
    granted = await connection.fetch(
        "SELECT c.relname AS tbl, a.attname AS col, p.privilege"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
        " CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']) AS p(privilege)"
        " WHERE n.nspname = 'clinic' AND c.relkind = 'r'"
        " AND has_column_privilege('cl_billing', c.oid, a.attnum, p.privilege)"
        " ORDER BY 1, 2, 3"
    )
    found = sorted((r["tbl"], r["col"], r["privilege"]) for r in granted)
    expected = sorted(tuple(item) for item in EXPECTED_COLUMN_PRIVILEGES)
    ok &= report(found == expected,
                 "column privileges are exactly: SELECT on appointments, SELECT on patients.id"
                 " and patients.full_name, UPDATE on appointments.fee")
    for item in sorted(set(expected) - set(found)):
        print("    missing: " + repr(item))
    for item in sorted(set(found) - set(expected)):
        print("    unexpected: " + repr(item))
    for table in ("departments", "doctors", "patients", "appointments"):
        whole = await connection.fetchval(
            "SELECT has_table_privilege('cl_billing', $1, 'DELETE, TRUNCATE, TRIGGER')",
            "clinic." + table,
        )
        ok &= report(not whole, "no DELETE, TRUNCATE or TRIGGER on clinic." + table)
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""


def _billing_privileges() -> list[tuple[str, str, str]]:
    appointment_columns = COLUMNS["clinic.appointments"]
    privileges = [("appointments", column, "SELECT") for column in appointment_columns]
    privileges += [("appointments", "fee", "UPDATE")]
    privileges += [("patients", "full_name", "SELECT"), ("patients", "id", "SELECT")]
    return sorted(privileges)


BILLING_VERIFIER = verifier_source(
    f"""Verifier of {BILLING_ID} (MCPMark contract: exit code 0 means PASS).

Checks that the role cl_billing exists without login, has USAGE on clinic, SELECT on all of
clinic.appointments, SELECT on patients.id and patients.full_name only, UPDATE on
appointments.fee only and no other privilege on any clinic table; and that no data changed.
""",
    {"EXPECTED_COLUMN_PRIVILEGES": _billing_privileges(), "UNCHANGED": UNCHANGED},
    BILLING_CHECK,
)

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

BILLING_TASK = SuiteTask(
    task=make_task(
        BILLING_ID,
        "In the clinic database, create a role cl_billing (NOLOGIN) for the billing team, "
        "with exactly these privileges: USAGE on schema clinic; SELECT on clinic.appointments "
        "(all columns); SELECT on only the id and full_name columns of clinic.patients (none of "
        "birth_date, phone, email, street, city, postcode); UPDATE on only the fee column of "
        "clinic.appointments. No other privilege on any clinic table, and no data changes.",
        ["roles", "grants", "column-privileges"],
    ),
    kind="roles-grants",
    build_initial=seeder(BILLING_ID),
    verifier=BILLING_VERIFIER,
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

TASKS: list[SuiteTask] = [
    LAB_TASK,
    SPLIT_TASK,
    WORKLOAD_TASK,
    NOSHOW_TASK,
    RLS_TASK,
    BILLING_TASK,
]

"""pg-clinic-lab-results (DDL): a new table clinic.lab_results with an identity key, a cascading
foreign key, named check and unique constraints and an index.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import (
    columns_of,
    constraint,
    index_definition,
    main,
    relkind,
    unchanged,
    violation,
)
from suites.ds.tasks.postgres.clinic import UNCHANGED, make_task, write_seed
from suites.ds.tasks.postgres.common import details, list_objects, list_schemas, scripted, sql
from suites.ds.verify_script import verify_script

TASK_ID = "pg-clinic-lab-results"

EXPECTED_COLUMNS = [
    ("id", "bigint", True),
    ("appointment_id", "integer", True),
    ("test_code", "text", True),
    ("value", "numeric(10,3)", True),
    ("unit", "text", True),
    ("taken_on", "date", True),
]


async def check(connection: asyncpg.Connection) -> bool:
    """Checks clinic.lab_results: columns, types and NOT NULL in order, the identity id and its
    primary key, the cascading foreign key to clinic.appointments, the named check and unique
    constraints (by definition and behaviour), the taken_on index, that the table is empty and
    that no table of that name was made in public; and that the clinic's tables are
    unchanged."""
    ok = report(
        await relkind(connection, "public", "lab_results") is None,
        "no lab_results table outside the clinic schema",
    )
    columns = await columns_of(connection, "clinic", "lab_results")
    if not report(
        columns == EXPECTED_COLUMNS, "clinic.lab_results columns: " + repr(EXPECTED_COLUMNS)
    ):
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
        foreign
        == ["FOREIGN KEY (appointment_id) REFERENCES clinic.appointments(id) ON DELETE CASCADE"],
        "appointment_id references clinic.appointments(id) ON DELETE CASCADE (found "
        + repr(foreign)
        + ")",
    )
    insert = (
        "INSERT INTO clinic.lab_results (appointment_id, test_code, value, unit, taken_on) VALUES "
    )
    broke = await violation(connection, insert + "(1, 'HB', -1, 'g/dL', '2024-01-01')")
    ok &= report(
        broke == "lab_results_value_nonnegative",
        "lab_results_value_nonnegative rejects a negative value",
    )
    broke = await violation(connection, insert + "(1, 'HB', 0, 'g/dL', '2024-01-01')")
    ok &= report(broke is None, "a zero value is accepted")
    unique = await constraint(
        connection, "clinic", "lab_results", "lab_results_appointment_test_key"
    )
    ok &= report(
        unique == ("u", "UNIQUE (appointment_id, test_code)"),
        "lab_results_appointment_test_key is unique on (appointment_id, test_code)",
    )
    broke = await violation(
        connection,
        insert + "(1, 'HB', 1, 'g/dL', '2024-01-01'), (1, 'HB', 2, 'g/dL', '2024-01-02')",
    )
    ok &= report(
        broke == "lab_results_appointment_test_key",
        "a second result of the same test for an appointment is rejected",
    )
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

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
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
    build_initial=write_seed,
    verifier=verify_script(TASK_ID, check, main),
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

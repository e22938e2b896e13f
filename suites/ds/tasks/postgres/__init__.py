"""Postgres tasks of the DS suite, one module per task: six on the ``retail`` schema, six on the
``clinic`` schema.

* ``retail_constraints`` (DDL): a foreign key, a check, a unique constraint and an index.
* ``retail_product_view`` (DDL): a sales view over products, items and orders.
* ``retail_dedupe_customers`` (clean-up): normalise emails, merge duplicate accounts.
* ``retail_order_totals`` (backfill): a new NOT NULL column filled from the items.
* ``retail_monthly_revenue`` (reporting): a summary table with exact values.
* ``retail_support_role`` (roles): a role with table and column grants.
* ``clinic_lab_results`` (DDL): a new table with identity, keys, a check and an index.
* ``clinic_split_contacts`` (migration): contact columns moved into their own table.
* ``clinic_doctor_workload`` (reporting): a materialized view with a unique index.
* ``clinic_noshow_report`` (reporting): a summary table of no-show rates per department.
* ``clinic_doctor_rls`` (row-level security): a role that sees only its doctor's rows.
* ``clinic_billing_role`` (roles): table and column grants for a billing role.

Each schema has a deterministic data generator (``retail_data``, ``clinic_data``) and a module of
what its tasks share (``retail``, ``clinic``); ``common`` holds the scripted-run helpers, seeds
and fingerprints; ``checks`` and ``roles`` hold what the verifiers share. Each verifier checks
every requirement its instruction spells out, and that the tables the task must not touch still
hold exactly their rows (by fingerprint).
"""

from __future__ import annotations

from suites.ds.spec import SuiteTask
from suites.ds.tasks.postgres import (
    clinic_billing_role,
    clinic_doctor_rls,
    clinic_doctor_workload,
    clinic_lab_results,
    clinic_noshow_report,
    clinic_split_contacts,
    retail_constraints,
    retail_dedupe_customers,
    retail_monthly_revenue,
    retail_order_totals,
    retail_product_view,
    retail_support_role,
)

TASKS: list[SuiteTask] = [
    retail_constraints.TASK,
    retail_product_view.TASK,
    retail_dedupe_customers.TASK,
    retail_order_totals.TASK,
    retail_monthly_revenue.TASK,
    retail_support_role.TASK,
    clinic_lab_results.TASK,
    clinic_split_contacts.TASK,
    clinic_doctor_workload.TASK,
    clinic_noshow_report.TASK,
    clinic_doctor_rls.TASK,
    clinic_billing_role.TASK,
]

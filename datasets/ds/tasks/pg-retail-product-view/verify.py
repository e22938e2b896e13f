"""Verifier of pg-retail-product-view (MCPMark contract: exit code 0 means PASS).

Checks that public.product_sales is a view with the columns product_id, sku, category,
units_sold, revenue in order, that it has one row per product (never-sold ones with 0) whose
units and revenue count only items of completed or shipped orders at the item's price, and that
no table's rows changed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from decimal import Decimal
from typing import NoReturn

import asyncpg

EXPECTED_COLUMNS = ['product_id', 'sku', 'category', 'units_sold', 'revenue']
EXPECTED_ROWS = [(1, 'GAR-1001', 'garden', 245, '37545.79'), (2, 'KIT-1002', 'kitchen', 289, '37521.43'), (3, 'OUT-1003', 'outdoor', 259, '20267.43'), (4, 'STA-1004', 'stationery', 315, '27563.73'), (5, 'TOY-1005', 'toys', 324, '28764.53'), (6, 'BOO-1006', 'books', 301, '26954.89'), (7, 'GAR-1007', 'garden', 309, '26645.01'), (8, 'KIT-1008', 'kitchen', 243, '15473.87'), (9, 'OUT-1009', 'outdoor', 322, '57721.97'), (10, 'STA-1010', 'stationery', 341, '4288.72'), (11, 'TOY-1011', 'toys', 265, '22793.25'), (12, 'BOO-1012', 'books', 282, '47230.44'), (13, 'GAR-1013', 'garden', 317, '58812.20'), (14, 'KIT-1014', 'kitchen', 270, '48759.29'), (15, 'OUT-1015', 'outdoor', 285, '5166.51'), (16, 'STA-1016', 'stationery', 278, '46818.60'), (17, 'TOY-1017', 'toys', 238, '8232.40'), (18, 'BOO-1018', 'books', 276, '4259.16'), (19, 'GAR-1019', 'garden', 312, '43622.28'), (20, 'KIT-1020', 'kitchen', 267, '10069.26'), (21, 'OUT-1021', 'outdoor', 379, '14055.20'), (22, 'STA-1022', 'stationery', 314, '32653.48'), (23, 'TOY-1023', 'toys', 323, '16449.44'), (24, 'BOO-1024', 'books', 274, '35901.42'), (25, 'GAR-1025', 'garden', 216, '32181.18'), (26, 'KIT-1026', 'kitchen', 292, '35204.35'), (27, 'OUT-1027', 'outdoor', 279, '17194.80'), (28, 'STA-1028', 'stationery', 339, '32781.34'), (29, 'TOY-1029', 'toys', 307, '38071.71'), (30, 'BOO-1030', 'books', 264, '31412.97'), (31, 'GAR-1031', 'garden', 309, '48664.20'), (32, 'KIT-1032', 'kitchen', 309, '4338.24'), (33, 'OUT-1033', 'outdoor', 291, '4932.19'), (34, 'STA-1034', 'stationery', 196, '2159.87'), (35, 'TOY-1035', 'toys', 361, '58104.67'), (36, 'BOO-1036', 'books', 317, '35375.75'), (37, 'GAR-1037', 'garden', 240, '33287.55'), (38, 'KIT-1038', 'kitchen', 282, '26864.44'), (39, 'OUT-1039', 'outdoor', 327, '58472.76'), (40, 'STA-1040', 'stationery', 255, '43786.30'), (41, 'TOY-1041', 'toys', 270, '5114.98'), (42, 'BOO-1042', 'books', 279, '10072.28'), (43, 'GAR-1043', 'garden', 338, '34551.18'), (44, 'KIT-1044', 'kitchen', 266, '12268.74'), (45, 'OUT-1045', 'outdoor', 272, '31674.41'), (46, 'STA-1046', 'stationery', 285, '21525.84'), (47, 'TOY-1047', 'toys', 351, '57696.74'), (48, 'BOO-1048', 'books', 244, '1257.36'), (49, 'GAR-1049', 'garden', 319, '44003.71'), (50, 'KIT-1050', 'kitchen', 313, '37593.11'), (51, 'OUT-1051', 'outdoor', 307, '12349.31'), (52, 'STA-1052', 'stationery', 278, '11258.14'), (53, 'TOY-1053', 'toys', 297, '2157.25'), (54, 'BOO-1054', 'books', 260, '6517.52'), (55, 'GAR-1055', 'garden', 304, '37515.54'), (56, 'KIT-1056', 'kitchen', 304, '48311.68'), (57, 'OUT-1057', 'outdoor', 271, '47427.33'), (58, 'STA-1058', 'stationery', 291, '45170.13'), (59, 'TOY-1059', 'toys', 304, '52529.60'), (60, 'BOO-1060', 'books', 310, '32089.38'), (61, 'GAR-1061', 'garden', 298, '43014.74'), (62, 'KIT-1062', 'kitchen', 275, '29156.72'), (63, 'OUT-1063', 'outdoor', 332, '47006.52'), (64, 'STA-1064', 'stationery', 306, '53689.83'), (65, 'TOY-1065', 'toys', 322, '52957.72'), (66, 'BOO-1066', 'books', 296, '15376.20'), (67, 'GAR-1067', 'garden', 302, '14747.54'), (68, 'KIT-1068', 'kitchen', 286, '19652.90'), (69, 'OUT-1069', 'outdoor', 270, '11390.35'), (70, 'STA-1070', 'stationery', 296, '23970.38'), (71, 'TOY-1071', 'toys', 284, '11868.02'), (72, 'BOO-1072', 'books', 296, '2729.72'), (73, 'GAR-1073', 'garden', 289, '28790.46'), (74, 'KIT-1074', 'kitchen', 272, '49829.85'), (75, 'OUT-1075', 'outdoor', 355, '48708.68'), (76, 'STA-1076', 'stationery', 245, '8585.50'), (77, 'TOY-1077', 'toys', 365, '54927.49'), (78, 'BOO-1078', 'books', 297, '29967.96'), (79, 'GAR-1079', 'garden', 334, '18592.02'), (80, 'KIT-1080', 'kitchen', 231, '10600.39'), (81, 'OUT-1081', 'outdoor', 279, '17912.52'), (82, 'STA-1082', 'stationery', 299, '25368.07'), (83, 'TOY-1083', 'toys', 276, '37592.55'), (84, 'BOO-1084', 'books', 302, '49371.06'), (85, 'GAR-1085', 'garden', 337, '42927.07'), (86, 'KIT-1086', 'kitchen', 267, '23519.71'), (87, 'OUT-1087', 'outdoor', 296, '37582.08'), (88, 'STA-1088', 'stationery', 254, '31294.10'), (89, 'TOY-1089', 'toys', 293, '29350.94'), (90, 'BOO-1090', 'books', 255, '35488.89'), (91, 'GAR-1091', 'garden', 262, '14382.50'), (92, 'KIT-1092', 'kitchen', 348, '4459.14'), (93, 'OUT-1093', 'outdoor', 310, '20130.55'), (94, 'STA-1094', 'stationery', 287, '29200.15'), (95, 'TOY-1095', 'toys', 289, '30831.81'), (96, 'BOO-1096', 'books', 277, '9383.68'), (97, 'GAR-1097', 'garden', 322, '18060.88'), (98, 'KIT-1098', 'kitchen', 267, '10315.29'), (99, 'OUT-1099', 'outdoor', 274, '21684.09'), (100, 'STA-1100', 'stationery', 295, '53583.05'), (101, 'TOY-1101', 'toys', 268, '9510.60'), (102, 'BOO-1102', 'books', 260, '9140.44'), (103, 'GAR-1103', 'garden', 294, '17771.64'), (104, 'KIT-1104', 'kitchen', 274, '45810.68'), (105, 'OUT-1105', 'outdoor', 296, '21525.25'), (106, 'STA-1106', 'stationery', 291, '22268.37'), (107, 'TOY-1107', 'toys', 320, '21726.54'), (108, 'BOO-1108', 'books', 269, '12272.63'), (109, 'GAR-1109', 'garden', 224, '36962.86'), (110, 'KIT-1110', 'kitchen', 282, '27797.04'), (111, 'OUT-1111', 'outdoor', 302, '50126.98'), (112, 'STA-1112', 'stationery', 237, '16969.85'), (113, 'TOY-1113', 'toys', 298, '41184.72'), (114, 'BOO-1114', 'books', 251, '23063.26'), (115, 'GAR-1115', 'garden', 0, '0.00'), (116, 'KIT-1116', 'kitchen', 0, '0.00'), (117, 'OUT-1117', 'outdoor', 0, '0.00'), (118, 'STA-1118', 'stationery', 0, '0.00'), (119, 'TOY-1119', 'toys', 0, '0.00'), (120, 'BOO-1120', 'books', 0, '0.00')]
UNCHANGED = {'customers': (('id', 'full_name', 'email', 'city', 'signed_up'), (900, '53a140c00a9f328ef028b8623dbdc48a')), 'products': (('id', 'sku', 'name', 'category', 'unit_price'), (120, 'da9b10f314305abae670f12c04622148')), 'orders': (('id', 'customer_id', 'ordered_at', 'status'), (6000, 'a46df722692d0e93eeecb476416e57bb')), 'order_items': (('id', 'order_id', 'product_id', 'quantity', 'unit_price'), (14484, 'd08451ab1e0cda5c9314c94219581fa2')), 'payments': (('id', 'order_id', 'paid_on', 'amount', 'method'), (4410, 'aaec4b790dbf518d49516bfa528955cc'))}


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


async def table_fingerprint(
    connection: asyncpg.Connection, table: str, columns: Sequence[str], key: str
) -> tuple[int, str]:
    """Row count and md5 of a table's rows in key order (values as text, NULL as ~)."""
    values = ", ".join(f"coalesce(({column})::text, '~')" for column in columns)
    row = await connection.fetchrow(
        "SELECT count(*) AS n, md5(coalesce(string_agg(concat_ws('|', " + values + "), E'\\n'"
        " ORDER BY " + key + "), '')) AS digest FROM " + table
    )
    assert row is not None  # an aggregate without GROUP BY returns one row
    return int(row["n"]), str(row["digest"])


async def same_rows(
    connection: asyncpg.Connection,
    table: str,
    columns: Sequence[str],
    key: str,
    expected: tuple[int, str],
) -> bool:
    """Report that ``table`` holds exactly the rows whose fingerprint is ``expected``."""
    try:
        found = await table_fingerprint(connection, table, columns, key)
    except asyncpg.PostgresError as error:
        return report(False, table + " unchanged (" + str(error).splitlines()[0] + ")")
    return report(
        found == tuple(expected),
        f"{table} holds exactly the expected rows ({expected[0]} expected, {found[0]} found)",
    )


async def unchanged(
    connection: asyncpg.Connection,
    tables: Mapping[str, tuple[Sequence[str], tuple[int, str]]],
) -> bool:
    """Report that every table of ``tables`` ({name: (columns, fingerprint)}) keeps its rows."""
    ok = True
    for table, (columns, expected) in tables.items():
        ok &= await same_rows(connection, table, columns, "id", expected)
    return ok


async def columns_of(
    connection: asyncpg.Connection, schema: str, table: str
) -> list[tuple[str, str, bool]]:
    """[(name, type as format_type prints it, not null)] of a relation, in order."""
    rows = await connection.fetch(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull"
        " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped"
        " ORDER BY a.attnum",
        schema,
        table,
    )
    return [(r["attname"], r["type"], r["attnotnull"]) for r in rows]


async def relkind(connection: asyncpg.Connection, schema: str, name: str) -> str | None:
    """pg_class.relkind of schema.name, or None."""
    kind: str | None = await connection.fetchval(
        "SELECT c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2",
        schema,
        name,
    )
    return kind


async def verify(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> int:
    """Connect as MCPMark's runners describe (``POSTGRES_*`` or ``DATABASE_URL``; the database
    from the first argument or ``POSTGRES_DATABASE``), run ``check``, print PASS or FAIL, and
    return the exit code."""
    database = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("POSTGRES_DATABASE")
    try:
        if os.environ.get("POSTGRES_HOST") or not os.environ.get("DATABASE_URL"):
            connection = await asyncpg.connect(
                host=os.environ.get("POSTGRES_HOST", "localhost"),
                port=int(os.environ.get("POSTGRES_PORT", "5432")),
                user=os.environ.get("POSTGRES_USERNAME", "postgres"),
                password=os.environ.get("POSTGRES_PASSWORD") or None,
                database=database,
            )
        else:
            connection = await asyncpg.connect(os.environ["DATABASE_URL"])
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        print("cannot connect to the database: " + str(error))
        return 1
    try:
        passed = await check(connection)
    except asyncpg.PostgresError as error:
        report(False, "query failed: " + str(error).splitlines()[0])
        passed = False
    finally:
        await connection.close()
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


async def check(connection: asyncpg.Connection) -> bool:
    kind = await relkind(connection, "public", "product_sales")
    if not report(kind == "v", "public.product_sales is a view"):
        return False
    names = [name for name, _, _ in await columns_of(connection, "public", "product_sales")]
    if not report(names == EXPECTED_COLUMNS, "columns are " + ", ".join(EXPECTED_COLUMNS)):
        print("    found: " + ", ".join(names))
        return False
    records = await connection.fetch(
        "SELECT product_id, sku, category, units_sold, revenue FROM public.product_sales"
    )
    found = sorted((int(r[0]), r[1], r[2], int(r[3]), Decimal(str(r[4]))) for r in records)
    expected = [(a, b, c, d, Decimal(e)) for a, b, c, d, e in EXPECTED_ROWS]
    ok = report(
        len(found) == len(expected),
        f"{len(expected)} rows, one per product (found {len(found)})",
    )
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every product's units_sold and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)

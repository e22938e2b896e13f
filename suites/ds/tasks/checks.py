"""The one line a verifier prints per check, shared by every task's ``verify.py``.

Functions of the ``checks`` modules are copied into the scripts (``suites.ds.verify_script``), so
they use only the standard library (and asyncpg for Postgres) and import nothing from this
repository but other such functions.
"""

from __future__ import annotations


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)

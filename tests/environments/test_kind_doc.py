"""The docs' table of ``EnvironmentKind`` hooks (docs/extending.md, "Environment kinds") documents
exactly the hooks the class has: a hook added to the class needs a row, and a row must name a hook
that exists."""

from __future__ import annotations

import re
from abc import ABC
from pathlib import Path

from environments.kind import EnvironmentKind

PAGE = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
SECTION = "## Environment kinds"
ROW = re.compile(r"^\| `(?:async )?([A-Za-z_]\w*)")


def documented_hooks(text: str) -> list[str]:
    """The hook each row of the section's table names, in order (its first code span)."""
    section = text.split(SECTION, 1)[1]
    section = re.split(r"^#{1,3} ", section, maxsplit=1, flags=re.MULTILINE)[0]
    return [match.group(1) for line in section.splitlines() if (match := ROW.match(line))]


def class_hooks() -> set[str]:
    """Every public attribute and method ``EnvironmentKind`` declares or inherits from its own
    bases (not ``object``'s or ``ABC``'s), annotated-only class variables included."""
    names: set[str] = set()
    for cls in EnvironmentKind.__mro__:
        if cls in (object, ABC):
            continue
        names.update(vars(cls))
        names.update(getattr(cls, "__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


def test_the_docs_page_documents_every_hook_and_only_hooks() -> None:
    documented = documented_hooks(PAGE.read_text(encoding="utf-8"))
    assert len(documented) == len(set(documented)), "a hook has two rows"
    hooks = class_hooks()
    assert sorted(hooks - set(documented)) == [], "hooks without a row in the docs' table"
    assert sorted(set(documented) - hooks) == [], "rows naming no hook of EnvironmentKind"


def test_the_check_reads_rows_and_sees_a_missing_one() -> None:
    table = "\n".join(
        [SECTION, "", "| hook | what it says |", "| --- | --- |"]
        + [f"| `{name}(x) -> str` | something |" for name in sorted(class_hooks())]
        + ["| `async replay_step(sandbox, recorded)` | again |", "", "## Next"]
    )
    rows = documented_hooks(table)
    assert rows.count("replay_step") == 2
    assert set(rows) == class_hooks()
    shorter = table.replace("| `tool_spec(x) -> str` | something |\n", "")
    assert "tool_spec" not in documented_hooks(shorter)

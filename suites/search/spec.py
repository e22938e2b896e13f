"""What a task of the search suite is made of: the question, the scripted agents that answer it,
and the claims their answers make.

A policy browses through a ``BrowsingSession`` and returns ``Claim`` records: the sentence it
states, the source it cites, and the ``Fact`` values the sentence asserts (each naming the true
entity and attribute in ``suites.search.world`` and the value the agent gave). The builder labels
each claim from the world and the archived source, never from the policy's intention; the
intention is only checked against that label.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from suites.search.browsing import BrowsingSession

__all__ = ["Claim", "Fact", "FlawKind", "Policy", "SearchPolicy", "SearchTask"]

FlawKind = Literal[
    "outdated-page",
    "wrong-row",
    "wrong-entity",
    "hallucinated-source",
    "missed-page",
]
"""How a flawed run goes wrong: it trusts a page a newer one contradicts, reads the neighbouring
row of a table or list, takes a number from another entity, cites (or invents) a page it never
read, or stops before the last page of a listing."""


@dataclass(frozen=True)
class Fact:
    """One value a claim asserts: ``world.fact(kind, name, attribute)`` should equal
    ``claimed`` (a made-up entity has no true value)."""

    kind: str
    name: str
    attribute: str
    claimed: str
    shown: bool = True
    """Whether the value is written on pages (a rank is not): only shown values must appear in
    the cited source."""


@dataclass(frozen=True)
class Claim:
    """One single-item claim of an answer."""

    text: str
    facts: tuple[Fact, ...]
    source: str
    cells: tuple[str, ...] = ()
    """Wide tasks: the claim's row of the answer table (the source column is added)."""
    more_sources: tuple[str, ...] = ()
    """Further pages cited for the same claim (its values may come from either)."""

    @property
    def sources(self) -> tuple[str, ...]:
        """Every cited page, the main one first."""
        return (self.source, *self.more_sources)


Policy = Callable[[BrowsingSession], Awaitable[list[Claim]]]
"""A scripted agent: browses, returns the claims of its answer."""


@dataclass(frozen=True)
class SearchPolicy:
    """One scripted agent for a task."""

    name: str
    """Short, unique within the task; part of the trajectory id."""
    agent: str
    """The agent style recorded as ``Trajectory.agent``."""
    run: Policy
    intent: Literal["PASS", "FAIL"]
    """What the run was written to be; the build fails when the labels disagree."""
    flaws: tuple[FlawKind, ...] = ()
    note: str = ""
    """What the run does wrong, for readers of the suite."""


@dataclass(frozen=True)
class SearchTask:
    """A question, how its answer is shaped, and the agents that answer it."""

    id: str
    subdomain: Literal["deep", "wide"]
    question: str
    policies: tuple[SearchPolicy, ...] = field(default_factory=tuple)
    columns: tuple[str, ...] = ()
    """Wide tasks: the answer table's columns (the claims are its rows)."""

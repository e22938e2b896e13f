"""The web addresses a search trajectory touches: pages it opened, sources it cited.

``opened_urls`` lists what the agent actually loaded (a browsing tool's ``url`` argument, a step's
observed page address); ``cited_urls`` lists what its answer names as sources (the claims'
``sources``, else the addresses written in the final response). ``needed_urls`` is their union
over a set of trajectories, plus each task's start page: the pages an archive must hold for a
judge to re-check the answers offline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dataset.actions import ToolCallAction
from dataset.models import PageArchiveState, Task, Trajectory

__all__ = ["cited_urls", "needed_urls", "normalise_url", "opened_urls", "urls_in_text"]

_URL = re.compile(r"https?://[^\s<>\"'`\])}|,]+", re.IGNORECASE)
_URL_ARGUMENTS = ("url", "href", "link", "uri", "page_url")
"""Argument names under which browsing tools take the address they open."""


def normalise_url(url: str) -> str:
    """The address without trailing punctuation picked up from prose and without a fragment
    (``#section`` names a place in the same page)."""
    url = url.strip().rstrip(".;:!?")
    return url.split("#", 1)[0]


def urls_in_text(text: str | None) -> list[str]:
    """Every http(s) address written in ``text``, in order, without repeats."""
    found: dict[str, None] = {}
    for match in _URL.finditer(text or ""):
        found[normalise_url(match.group(0))] = None
    return list(found)


def opened_urls(trajectory: Trajectory) -> list[str]:
    """Addresses the agent loaded, in order of first visit: tool arguments naming a URL and
    observed page addresses."""
    found: dict[str, None] = {}
    for step in trajectory.steps:
        action = step.action
        if isinstance(action, ToolCallAction):
            for name in _URL_ARGUMENTS:
                value = action.arguments.get(name)
                if isinstance(value, str) and value.startswith(("http://", "https://")):
                    found[normalise_url(value)] = None
        if step.observation is not None and step.observation.url:
            found[normalise_url(step.observation.url)] = None
    return list(found)


def cited_urls(trajectory: Trajectory) -> list[str]:
    """Sources the answer cites: its claims' sources, or the addresses in its final response
    when it has no claims."""
    if trajectory.items:
        found: dict[str, None] = {}
        for item in trajectory.items:
            for source in item.sources:
                found[normalise_url(source)] = None
        return list(found)
    return urls_in_text(trajectory.final_response)


def needed_urls(trajectories: Iterable[Trajectory], tasks: Iterable[Task] = ()) -> list[str]:
    """Sorted http(s) addresses a judge may need: every page opened or cited, and each archived
    task's start page (the list ``agentjudge archive`` reads)."""
    found: set[str] = set()
    for trajectory in trajectories:
        found.update(opened_urls(trajectory))
        # A cited "source" may be a title or a note rather than an address; only addresses go.
        found.update(url for url in cited_urls(trajectory) if _URL.fullmatch(url))
    for task in tasks:
        state = task.initial_state
        if isinstance(state, PageArchiveState) and state.start_url:
            found.add(normalise_url(state.start_url))
    return sorted(found)

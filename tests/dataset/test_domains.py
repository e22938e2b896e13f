"""The domain registry: a task names a registered domain, and a new domain is one record."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from dataset.domains import (
    DomainSpec,
    UnknownDomainError,
    domain_names,
    domain_spec,
    home_domain,
    register_domain,
    unregister_domain,
)
from dataset.models import Task

NOTEBOOK = DomainSpec(
    name="notebook",
    subdomains=frozenset({"jupyter"}),
    subject="a notebook server",
    subjects={"jupyter": "a Jupyter notebook"},
    system_template="domains/ds.md",
)


@pytest.fixture
def notebook() -> Iterator[DomainSpec]:
    register_domain(NOTEBOOK)
    try:
        yield NOTEBOOK
    finally:
        unregister_domain(NOTEBOOK.name)


def _task(domain: str, subdomain: str) -> Task:
    fields = {"id": "t-1", "domain": domain, "subdomain": subdomain, "instruction": "Do it."}
    return Task.model_validate(fields | {"initial_state": {"kind": "empty"}})


def test_an_unknown_domain_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValidationError, match=r"unknown domain 'spreadsheet' \(known domains: ds,"):
        _task("spreadsheet", "calc")
    with pytest.raises(UnknownDomainError, match="gui, mobile, search"):
        domain_spec("spreadsheet")


def test_a_registered_domain_is_accepted_and_owns_its_subdomains(notebook: DomainSpec) -> None:
    task = _task("notebook", "jupyter")
    assert task.domain == "notebook"
    assert home_domain("jupyter") == "notebook"
    with pytest.raises(ValidationError, match="belongs to domain 'notebook', not 'ds'"):
        _task("ds", "jupyter")
    assert "notebook" in Task.model_json_schema()["properties"]["domain"]["enum"]


def test_unregistered_domains_leave_tasks_and_schema(notebook: DomainSpec) -> None:
    unregister_domain(notebook.name)
    assert "notebook" not in domain_names()
    assert home_domain("jupyter") is None
    assert Task.model_json_schema()["properties"]["domain"]["enum"] == list(domain_names())
    with pytest.raises(ValidationError, match="unknown domain 'notebook'"):
        _task("notebook", "jupyter")


def test_a_taken_name_or_subdomain_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_domain(DomainSpec(name="ds", subject="x"))
    with pytest.raises(ValueError, match="postgres belong to 'ds'"):
        register_domain(DomainSpec(name="sql", subject="x", subdomains=frozenset({"postgres"})))
    assert "sql" not in domain_names()


def test_templates_default_to_the_domain_name_and_subjects_fall_back() -> None:
    spec = DomainSpec(name="notes", subject="a note store", subjects={"wiki": "a wiki"})
    assert (spec.system_template, spec.evidence_template) == (
        "domains/notes.md",
        "evidence/notes.md",
    )
    assert spec.subject_for("wiki") == "a wiki"
    assert spec.subject_for("other") == "a note store"
    assert NOTEBOOK.system_template == "domains/ds.md"

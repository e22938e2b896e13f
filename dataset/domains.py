"""The registry of domains: the families of environment a task belongs to, as data.

A domain is one ``DomainSpec`` record: its subdomains, the prompt templates that frame a judge's
system prompt for it, the line that says what the agent worked on, whether its datasets get the
agent-ranking table, and whether text-protocol judges are offered the one-line action form.
Every layer asks the record (``domain_spec``) instead of comparing a domain's name, so a new
domain is one record and its prompt files. The built-in domains are registered here; another
package calls ``register_domain``. An unknown name raises ``UnknownDomainError`` naming the known
ones, which is also what a task file naming one gets when it is read.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "DomainSpec",
    "UnknownDomainError",
    "domain_names",
    "domain_spec",
    "home_domain",
    "register_domain",
    "unregister_domain",
]

_NAME_PATTERN = r"^[a-z][a-z0-9_-]*$"


class UnknownDomainError(ValueError):
    """No domain of that name is registered."""


class DomainSpec(BaseModel):
    """Everything the runtime asks about a domain."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    name: str = Field(pattern=_NAME_PATTERN)
    """The domain's name, as tasks spell it in ``domain`` (``ds``, ``gui``, ...)."""

    subdomains: frozenset[str] = frozenset()
    """Subdomains whose home is this domain: a task naming one must name this domain. Other
    subdomain names are accepted under any domain."""

    subject: str = Field(min_length=1)
    """What the agent worked on, for the system prompt's ``$subject`` slot, when its subdomain
    has no line of its own in ``subjects``."""

    subjects: dict[str, str] = Field(default_factory=dict)
    """The ``$subject`` line of particular subdomains."""

    system_template: str = ""
    """The system prompt's template in the ``prompts`` package; empty: ``domains/<name>.md``."""

    evidence_template: str = ""
    """The template saying what to check in the domain's environment, part of a tool-using
    judge's tool section; empty: ``evidence/<name>.md``."""

    ranks_agents: bool = False
    """Whether a judged dataset with tasks of this domain gets the agent-ranking table (its
    trajectories are runs of several agents from source benchmarks)."""

    action_line: bool = False
    """Whether judges that write their calls as text are told of the one-line ``ACTION: {...}``
    form (``prompts/modes/action_line.md``) that the domain's source benchmark uses."""

    @model_validator(mode="after")
    def _default_templates(self) -> DomainSpec:
        # Frozen model: the derived names are set once, here.
        if not self.system_template:
            object.__setattr__(self, "system_template", f"domains/{self.name}.md")
        if not self.evidence_template:
            object.__setattr__(self, "evidence_template", f"evidence/{self.name}.md")
        return self

    def subject_for(self, subdomain: str) -> str:
        """The ``$subject`` line of a task of this domain in ``subdomain``."""
        return self.subjects.get(subdomain) or self.subject


_BUILT_IN: tuple[DomainSpec, ...] = (
    DomainSpec(
        name="ds",
        subdomains=frozenset({"filesystem", "postgres"}),
        subject="files or a database",
        subjects={
            "filesystem": "the files and folders of a sandboxed directory",
            "postgres": "a PostgreSQL database",
        },
    ),
    DomainSpec(
        name="gui",
        subdomains=frozenset({"ppt", "word", "excel"}),
        subject="a LibreOffice application",
        subjects={
            "word": "the LibreOffice Writer word processor",
            "excel": "the LibreOffice Calc spreadsheet",
            "ppt": "the LibreOffice Impress presentation program",
        },
        action_line=True,
    ),
    DomainSpec(
        name="mobile",
        subdomains=frozenset({"android"}),
        subject="apps on an Android device",
        ranks_agents=True,
    ),
    DomainSpec(
        name="search",
        subdomains=frozenset({"deep", "wide"}),
        subject="an information-seeking question",
        subjects={
            "deep": "a question that needs facts combined from several sources",
            "wide": "a question that asks for many items meeting shared conditions",
        },
    ),
)
"""The domains that ship with the runtime."""

_domains: dict[str, DomainSpec] = {spec.name: spec for spec in _BUILT_IN}


def register_domain(spec: DomainSpec, *, replace: bool = False) -> DomainSpec:
    """Register ``spec`` under its name; a taken name, or a subdomain another domain already
    calls its own, is an error unless ``replace``."""
    if spec.name in _domains and not replace:
        raise ValueError(f"a domain named {spec.name!r} is already registered")
    for other in _domains.values():
        shared = sorted(spec.subdomains & other.subdomains)
        if other.name != spec.name and shared and not replace:
            raise ValueError(
                f"domain {spec.name!r}: subdomain(s) {', '.join(shared)} belong to {other.name!r}"
            )
    _domains[spec.name] = spec
    return spec


def unregister_domain(name: str) -> None:
    """Forget a registered domain (for tests and plugins that replace one); unknown names pass."""
    _domains.pop(name, None)


def domain_names() -> tuple[str, ...]:
    """The registered domains' names, in registration order."""
    return tuple(_domains)


def domain_spec(name: str) -> DomainSpec:
    """The domain registered as ``name``; ``UnknownDomainError`` naming the known ones
    otherwise."""
    spec = _domains.get(name)
    if spec is None:
        known = ", ".join(_domains) or "none"
        raise UnknownDomainError(f"unknown domain {name!r} (known domains: {known})")
    return spec


def home_domain(subdomain: str) -> str | None:
    """The domain whose own subdomain ``subdomain`` is, or None when no domain claims it."""
    for spec in _domains.values():
        if subdomain in spec.subdomains:
            return spec.name
    return None

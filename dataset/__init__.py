"""Datasets: the unified data model, the on-disk format, validation and importers.

Owns ``Task``, ``Trajectory``, ``Step`` and the action union; the registry of domains
(``dataset.domains``); reading and writing dataset folders;
converters from published formats (``dataset.importers``); the one wording of a recorded step for
judges (``dataset.rendering``). Must not start environments, run
verifiers or call models: it describes recorded runs, it does not execute anything.
"""

from dataset.actions import (
    Action,
    AndroidAction,
    Computer13Action,
    PyAutoGuiAction,
    ToolCallAction,
    describe_action,
)
from dataset.domains import DomainSpec, domain_spec, register_domain
from dataset.models import (
    SANDBOX_ROOT_PLACEHOLDER,
    AgentUsage,
    ClaimItem,
    Label,
    Observation,
    Provenance,
    Step,
    Task,
    Trajectory,
    VerifierRef,
)
from dataset.problems import DatasetError, Problem
from dataset.store import Dataset, Manifest, load_dataset

__all__ = [
    "SANDBOX_ROOT_PLACEHOLDER",
    "Action",
    "AgentUsage",
    "AndroidAction",
    "ClaimItem",
    "Computer13Action",
    "Dataset",
    "DatasetError",
    "DomainSpec",
    "Label",
    "Manifest",
    "Observation",
    "Problem",
    "Provenance",
    "PyAutoGuiAction",
    "Step",
    "Task",
    "ToolCallAction",
    "Trajectory",
    "VerifierRef",
    "describe_action",
    "domain_spec",
    "load_dataset",
    "register_domain",
]

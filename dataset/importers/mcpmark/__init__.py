"""Import MCPMark run folders (filesystem and Postgres services) into the unified format.

Runs come in three layouts: MCPMark's own ``<exp>/<model>__<service>/run-N/<category>__<task>/``,
the community experiments' ``<server>/run-N/<category>__<task>/`` and AJ-Bench's
``.../<service>/.../{success,fail}/<model_run>/``; each run folder holds ``messages.json`` (the
conversation in the OpenAI Agents SDK item style) and, except in AJ-Bench, ``meta.json`` (the
verifier's outcome, token usage, turn count, the ``mcp`` service). MCPMark's task folders and
initial environments are optional inputs: with them the tasks are bundled; without them the
task's instruction is the recorded user message and its initial state is an ``ExternalState``
naming the environment to supply.

The modules: ``services`` (the known services and their tool servers), ``discovery`` (run
folders and their names), ``conversation`` (``messages.json`` to steps), ``meta`` (``meta.json``
to label, usage, times and stop reason), ``paths`` (rewriting the per-run sandbox folder to
``SANDBOX_ROOT_PLACEHOLDER``), ``task_files`` (task folders, verifiers, their files and initial
states) and ``importer`` (the import as a whole).
"""

from dataset.importers.mcpmark.conversation import decode_tool_output
from dataset.importers.mcpmark.discovery import find_run_dirs
from dataset.importers.mcpmark.importer import (
    SUPPORTED_SERVICES,
    DuplicateIdError,
    ImportReport,
    import_mcpmark,
)
from dataset.importers.mcpmark.services import SERVICES

__all__ = [
    "SERVICES",
    "SUPPORTED_SERVICES",
    "DuplicateIdError",
    "ImportReport",
    "decode_tool_output",
    "find_run_dirs",
    "import_mcpmark",
]

"""Import MCPMark run folders (filesystem and Postgres services) into the unified format.

An MCPMark results tree holds one folder per attempt,
``<exp>/<model>__<service>/run-N/<category>__<task>/``, each with ``meta.json`` (the verifier's
outcome, token usage, turn count) and ``messages.json`` (the conversation in the OpenAI Agents SDK
item style). MCPMark's task folders (``description.md``, ``verify.py``) and initial environments
are optional inputs: with them the tasks are bundled; without them the task's instruction is the
recorded user message and its initial state is an ``ExternalState`` naming the environment to
supply.

The modules: ``discovery`` (run folders and their names), ``conversation`` (``messages.json`` to
steps), ``meta`` (``meta.json`` to label, usage, times and stop reason), ``paths`` (rewriting the
per-run sandbox folder to ``SANDBOX_ROOT_PLACEHOLDER``), ``task_files`` (task folders, verifiers
and initial states) and ``importer`` (the import as a whole).
"""

from dataset.importers.mcpmark.conversation import decode_tool_output
from dataset.importers.mcpmark.discovery import find_run_dirs
from dataset.importers.mcpmark.importer import SUPPORTED_SERVICES, ImportReport, import_mcpmark

__all__ = [
    "SUPPORTED_SERVICES",
    "ImportReport",
    "decode_tool_output",
    "find_run_dirs",
    "import_mcpmark",
]

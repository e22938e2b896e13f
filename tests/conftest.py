"""Test-wide settings: a private scratch directory for every sandbox the suite creates.

Set before any test module imports the runtime, so runs made by tests (and the child processes
they start) never mix with, or garbage-collect, a real run's sandboxes.
"""

from __future__ import annotations

import os
import tempfile

from sandboxes.runs import WORKDIR_ENV

os.environ[WORKDIR_ENV] = tempfile.mkdtemp(prefix="agentjudge-tests-")

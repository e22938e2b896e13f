"""The mode registry and the mobile methods import in either order (no import cycle)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from judge_agent.modes import MOBILE_METHODS

MODULES = sorted({location.partition(":")[0] for location in MOBILE_METHODS.values()})


def _fresh(script: str) -> str:
    """What ``script`` prints, run in a new interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("module", ["judge_agent.modes", "judge_agent.mobile_methods", *MODULES])
def test_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """Each module imports on its own, first, and every mobile method's mode then resolves."""
    script = (
        f"import {module}\n"
        "from judge_agent.modes import MOBILE_METHODS, judge_mode\n"
        "for name in MOBILE_METHODS:\n"
        "    assert judge_mode(name).name == name, name\n"
        "print('ok')\n"
    )
    assert _fresh(script) == "ok"


def test_mobile_method_modules_are_not_imported_by_the_registry() -> None:
    """Importing the registry leaves the methods' modules unloaded until a lookup."""
    script = (
        "import sys\n"
        "import judge_agent.modes\n"
        "print([m for m in sys.modules if m.startswith('judge_agent.mobile_methods')])\n"
    )
    assert _fresh(script) == "[]"

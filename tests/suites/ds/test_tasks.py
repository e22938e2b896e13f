"""The suite's task modules: one per task, named after it, each with a verifier that stands alone
(standard library and asyncpg only, every name it uses defined in the script)."""

from __future__ import annotations

import ast
import builtins
import dis
import importlib
import pkgutil
import sys
from types import CodeType, FunctionType, ModuleType

import pytest

import suites.ds.tasks.filesystem
import suites.ds.tasks.postgres
from suites.ds.spec import SuiteTask
from suites.ds.tasks import all_tasks

PACKAGES = [(suites.ds.tasks.filesystem, "fs-"), (suites.ds.tasks.postgres, "pg-")]


def _modules(package: ModuleType) -> dict[str, ModuleType]:
    return {
        info.name: importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    }


@pytest.mark.parametrize(("package", "prefix"), PACKAGES, ids=["filesystem", "postgres"])
def test_every_task_has_its_own_module_named_after_it(package: ModuleType, prefix: str) -> None:
    tasks = {name: vars(module).get("TASK") for name, module in _modules(package).items()}
    defined = {name: task for name, task in tasks.items() if isinstance(task, SuiteTask)}
    for name, task in defined.items():
        assert task.task.id == prefix + name.replace("_", "-"), name
    listed: list[SuiteTask] = package.TASKS
    assert len(listed) == len(defined)
    assert {id(task) for task in listed} == {id(task) for task in defined.values()}
    # no module left over with several tasks
    assert not [
        name
        for name, module in _modules(package).items()
        if sum(isinstance(value, SuiteTask) for value in vars(module).values()) > 1
    ]


def _loaded_globals(code: CodeType) -> set[str]:
    names = {
        str(instruction.argval)
        for instruction in dis.get_instructions(code)
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            names |= _loaded_globals(constant)
    return names


@pytest.mark.parametrize("suite_task", all_tasks(), ids=lambda task: task.task.id)
def test_every_verifier_stands_alone(suite_task: SuiteTask) -> None:
    tree = ast.parse(suite_task.verifier)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert imported - set(sys.stdlib_module_names) <= {"asyncpg"}
    namespace: dict[str, object] = {"__name__": "verify_under_test"}
    exec(compile(tree, "verify.py", "exec"), namespace)  # defines, does not run: not __main__
    functions = [value for value in namespace.values() if isinstance(value, FunctionType)]
    assert "check" in namespace
    assert "main" in namespace
    for function in functions:
        missing = {
            name
            for name in _loaded_globals(function.__code__)
            if name not in namespace and not hasattr(builtins, name)
        }
        assert not missing, f"{function.__name__} uses undefined {sorted(missing)}"

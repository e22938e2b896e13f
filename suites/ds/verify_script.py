"""Writing a task's standalone ``verify.py`` from real Python functions.

A verifier's checks are ordinary functions of the task's module, linted and type-checked with the
rest of ``suites``. ``verify_script`` turns them into the script the task ships, which needs only
the standard library and the packages of ``THIRD_PARTY``. Starting from the task's ``check`` and
the kind's ``main`` (which reads the environment, runs ``check`` and exits), it copies the source
of every function they reach, writes every module-level value they read as a literal (``NAME =
<repr>``), and repeats the imports the functions' modules made from those, names used only in
annotations included. ``check``'s docstring becomes the script's docstring.

Anything else a check reaches (a class or object of this project, a value without a literal form,
two different things under one name) stops with ``VerifyScriptError`` naming it, so a
``verify.py`` never depends on this repository.

This module must not know any task or environment kind: what a script does comes from the
functions it is given.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CodeType, FunctionType, ModuleType
from typing import Any

THIRD_PARTY = frozenset({"asyncpg", "docx", "openpyxl", "pptx"})
"""Packages besides the standard library that a ``verify.py`` may import: asyncpg (MCPMark's
Postgres verifiers run with it installed) and the office readers GUI verifiers open saved
documents with (python-docx, openpyxl, python-pptx: the runtime's ``desktop`` extra)."""

SUMMARY_WIDTH = 96
"""Line width of the script's docstring."""


class VerifyScriptError(Exception):
    """A check reaches something a standalone ``verify.py`` cannot carry."""


@dataclass(frozen=True)
class _Import:
    """One name an import statement binds: ``import module [as bound]`` (``name`` None) or
    ``from module import name [as bound]``."""

    module: str
    name: str | None
    bound: str

    def key(self) -> tuple[str, str, str]:
        return self.module, self.name or "", self.bound

    def clause(self) -> str:
        """``module [as bound]`` or ``name [as bound]``."""
        if self.name is None:
            plain = self.bound == _top(self.module)
            return self.module if plain else f"{self.module} as {self.bound}"
        return self.name if self.bound == self.name else f"{self.name} as {self.bound}"


def verify_script(task_id: str, check: Callable[..., Any], main: Callable[..., Any]) -> str:
    """The ``verify.py`` of ``task_id``: ``check``'s docstring as the script's, the constants,
    imports and functions that ``check`` and ``main`` need, and ``main(check)`` as entry point."""
    if not check.__doc__:
        raise VerifyScriptError(
            f"{task_id}: {check.__qualname__} needs a docstring (what it checks)"
        )
    entry = _function(main, task_id)
    bundle = _Bundle(task_id, check.__module__)
    bundle.add(_function(check, task_id), strip_docstring=True)
    bundle.add(entry)
    summary = textwrap.fill(" ".join(inspect.cleandoc(check.__doc__).split()), SUMMARY_WIDTH)
    if '"""' in summary or "\\" in summary:
        raise VerifyScriptError(
            f"{task_id}: {check.__qualname__}'s docstring has quotes or escapes"
        )
    head = f'"""Verifier of {task_id} (MCPMark contract: exit code 0 means PASS).\n\n{summary}\n"""'
    tail = f'if __name__ == "__main__":\n    {main.__name__}({check.__name__})\n'
    return bundle.render(head, entry, tail)


def _function(value: object, task_id: str) -> FunctionType:
    if not isinstance(value, FunctionType) or value.__name__ != value.__qualname__:
        raise VerifyScriptError(f"{task_id}: {value!r} is not a module-level function")
    return value


class _Bundle:
    """What one script holds: functions by name, constants by name, imports by bound name."""

    def __init__(self, task_id: str, home: str) -> None:
        self.task_id = task_id
        self.home = home  # the task's module: its functions come after the shared ones
        self.functions: dict[str, tuple[FunctionType, str]] = {}
        self.constants: dict[str, object] = {}
        self.imports: dict[str, _Import] = {}

    def fail(self, message: str) -> VerifyScriptError:
        return VerifyScriptError(f"{self.task_id}: {message}")

    def add(self, function: FunctionType, *, strip_docstring: bool = False) -> None:
        """Include ``function`` and, recursively, everything it uses."""
        name = function.__name__
        known = self.functions.get(name)
        if known is not None:
            if known[0] is not function:
                raise self.fail(
                    f"two functions named {name} ({_where(known[0])}, {_where(function)})"
                )
            return
        self._claim(name, function)
        tree, source = _source(function)
        if strip_docstring:
            source = _without_docstring(tree, source)
        self.functions[name] = (function, source)
        module = sys.modules[function.__module__]
        used = sorted(_globals(function.__code__) | _annotation_names(tree))
        for used_name in used:
            self._resolve(used_name, module, function)

    def _claim(self, name: str, value: object) -> None:
        taken = [
            what
            for what, table in (
                ("function", self.functions),
                ("constant", self.constants),
                ("import", self.imports),
            )
            if name in table
        ]
        if taken and not (taken == ["constant"] and _same(self.constants[name], value)):
            raise self.fail(
                f"the name {name} stands for two things (a {taken[0]} and {value!r:.80})"
            )

    def _resolve(self, name: str, module: ModuleType, user: FunctionType) -> None:
        binding = _imports_of(module).get(name)
        if binding is not None and _importable(binding.module):
            if self.imports.get(name) != binding:
                self._claim(name, binding)
                self.imports[name] = binding
            return
        if name not in vars(module):
            if hasattr(builtins, name):
                return
            raise self.fail(f"{_where(user)} uses {name}, which its module does not define")
        value = vars(module)[name]
        if isinstance(value, FunctionType):
            if value.__name__ != name:
                raise self.fail(
                    f"{_where(user)} calls {_where(value)} as {name}; the script would define it"
                    f" as {value.__name__}: import it under its own name"
                )
            self.add(value)
        elif isinstance(value, type | ModuleType) or callable(value):
            raise self.fail(
                f"{_where(user)} uses {name} ({value!r:.80}), which a standalone verify.py"
                " cannot import; use the standard library, THIRD_PARTY, functions or literal values"
            )
        else:
            if not _is_literal(value):
                raise self.fail(f"{_where(user)} uses {name}, whose value has no literal form")
            if name not in self.constants:
                self._claim(name, value)
                self.constants[name] = value

    def _position(self, function: FunctionType) -> tuple[bool, str, int]:
        module = function.__module__
        return module == self.home, module, function.__code__.co_firstlineno

    def render(self, head: str, main: FunctionType, tail: str) -> str:
        """The script: docstring, imports, constants, functions (``main`` last), entry point."""
        blocks = [head, "from __future__ import annotations"]
        imports = sorted(set(self.imports.values()), key=_Import.key)
        for third_party in (False, True):
            group = [item for item in imports if (_top(item.module) in THIRD_PARTY) == third_party]
            if group:
                blocks.append(_import_lines(group))
        if self.constants:
            blocks.append(
                "\n".join(f"{name} = {self.constants[name]!r}" for name in sorted(self.constants))
            )
        text = "\n\n".join(blocks) + "\n"
        ordered = sorted(
            (item for item in self.functions.values() if item[0] is not main),
            key=lambda item: self._position(item[0]),
        )
        for _, source in [*ordered, self.functions[main.__name__]]:
            text += "\n\n" + source
        return text + "\n\n" + tail


def _import_lines(group: list[_Import]) -> str:
    plain = sorted({f"import {item.clause()}" for item in group if item.name is None})
    by_module: dict[str, set[str]] = {}
    for item in group:
        if item.name is not None:
            by_module.setdefault(item.module, set()).add(item.clause())
    members = [
        f"from {module} import {', '.join(sorted(names))}"
        for module, names in sorted(by_module.items())
    ]
    return "\n".join(plain + members)


def _where(function: FunctionType) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def _same(left: object, right: object) -> bool:
    return left is right or (type(left) is type(right) and repr(left) == repr(right))


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def _importable(module: str) -> bool:
    top = _top(module)
    return top != "__future__" and (top in sys.stdlib_module_names or top in THIRD_PARTY)


def _is_literal(value: object) -> bool:
    try:
        return bool(ast.literal_eval(repr(value)) == value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _source(function: FunctionType) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]:
    source = textwrap.dedent(inspect.getsource(function)).rstrip("\n") + "\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    if node.decorator_list:
        raise VerifyScriptError(f"{_where(function)}: decorated functions are not copied")
    return node, source


def _without_docstring(node: ast.FunctionDef | ast.AsyncFunctionDef, source: str) -> str:
    first = node.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return source
    assert first.end_lineno is not None
    lines = source.splitlines(keepends=True)
    kept = lines[: first.lineno - 1] + lines[first.end_lineno :]
    return "".join(kept)


def _globals(code: CodeType) -> set[str]:
    """Names ``code`` (and the functions and comprehensions inside it) reads as globals."""
    names = {
        str(instruction.argval)
        for instruction in dis.get_instructions(code)
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            names |= _globals(constant)
    return names


def _annotation_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the annotations inside ``node`` refer to (not evaluated by the function itself)."""
    annotations: list[ast.expr] = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            arguments = inner.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
            annotations += [arg.annotation for arg in every if arg.annotation is not None]
            if not isinstance(inner, ast.Lambda) and inner.returns is not None:
                annotations.append(inner.returns)
        elif isinstance(inner, ast.AnnAssign):
            annotations.append(inner.annotation)
    return {
        name.id
        for annotation in annotations
        for name in ast.walk(annotation)
        if isinstance(name, ast.Name)
    }


@functools.cache
def _imports_of(module: ModuleType) -> dict[str, _Import]:
    """The names ``module``'s top-level import statements bind."""
    return dict(_bindings(ast.parse(inspect.getsource(module))))


def _bindings(tree: ast.Module) -> Iterator[tuple[str, _Import]]:
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                bound = alias.asname or _top(alias.name)
                yield bound, _Import(alias.name, None, bound)
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                bound = alias.asname or alias.name
                yield bound, _Import(statement.module, alias.name, bound)

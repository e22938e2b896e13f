"""The tools of a coding agent's project folder, as one spec table per audience.

The recorded agents had four tools: a shell and a file editor, the pair every coding-agent
harness gives its model (OpenHands' ``execute_bash`` and ``str_replace_editor``, SWE-agent's
``bash`` and editor, Claude Code's Bash, Read, Write and Edit). The names are plain verbs of our
choosing; the arguments are Claude Code's: ``run_command(command, timeout)`` (Bash, with the
timeout in seconds rather than milliseconds), ``read_file(path, offset, limit)`` (Read),
``write_file(path, content)`` (Write) and ``edit_file(path, old_string, new_string,
replace_all)`` (Edit), with ``path`` relative to the project folder, the agent's working
directory, where Claude Code takes an absolute ``file_path``. Commands see the project at
``/box/project`` and nothing of the host's layout, so recordings hold no host path.

A judge gets ``read_file``, ``list_files`` and ``search_files`` over the end state, and
``run_command`` on a throwaway copy of it (a writable judge keeps its commands' changes in its
private clone, and also gets the two editing tools). Every path goes through the tree's
confinement (``sandboxes.filesystem.local.LocalFileTree``: no ``..``, no absolute path, no
symlink or hard link leading out); every command runs in the dataset-code box with a time limit
and capped output (``sandboxes.workspace.shell``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from mcp_servers.results import ToolArguments, ToolResult, ToolSpec
from sandboxes.filesystem.local import LocalFileTree
from sandboxes.filesystem.tree import FileTree, ReadOnlyTreeError, SpecialFileError, TreePathError
from sandboxes.workspace.shell import DEFAULT_TIMEOUT, MAX_TIMEOUT, run_project_command

READ_LINES = 2000
"""Lines ``read_file`` returns when the call names no limit."""

LINE_CHARS = 2000
"""Characters of one line ``read_file`` shows; longer lines are cut with a mark."""

READ_BYTES = 1_000_000
"""The largest file ``read_file`` reads."""

WRITE_BYTES = 1_000_000
"""The largest content ``write_file`` and ``edit_file`` write."""

LIST_ENTRIES = 2000
"""Entries ``list_files`` returns at most."""

SEARCH_LINES = 200
"""Matching lines ``search_files`` returns at most."""


@dataclass(frozen=True)
class Workspace:
    """The project folder a server works on."""

    tree: LocalFileTree
    """The folder's tree on this host (its confinement guards every path)."""
    keep_changes: bool
    """Whether commands' changes stay in the folder (the agent's and a writable judge's)."""


class RunCommandArguments(ToolArguments):
    command: Annotated[str, Field(min_length=1)]
    """The shell command, run with bash in the project folder."""
    timeout: Annotated[float, Field(gt=0, le=MAX_TIMEOUT)] = DEFAULT_TIMEOUT
    """Seconds after which the command is killed."""


class ReadFileArguments(ToolArguments):
    path: str
    """The file, relative to the project folder."""
    offset: Annotated[int, Field(ge=1)] = 1
    """The first line to show (1-based)."""
    limit: Annotated[int, Field(ge=1)] = READ_LINES
    """How many lines to show."""


class WriteFileArguments(ToolArguments):
    path: str
    """The file to create or replace, relative to the project folder."""
    content: str
    """Its whole new content."""


class EditFileArguments(ToolArguments):
    path: str
    """The file to change, relative to the project folder."""
    old_string: Annotated[str, Field(min_length=1)]
    """The exact text to replace."""
    new_string: str
    """What replaces it."""
    replace_all: bool = False
    """Replace every occurrence; otherwise ``old_string`` must occur exactly once."""


class ListFilesArguments(ToolArguments):
    path: str = "."
    """The folder to list (recursively), relative to the project folder."""


class SearchFilesArguments(ToolArguments):
    pattern: Annotated[str, Field(min_length=1)]
    """An extended regular expression (``grep -E``)."""
    path: str = "."
    """The folder or file to search, relative to the project folder."""
    glob: str | None = None
    """Only files whose name matches this pattern (``*.py``)."""


class FileTooLargeError(OSError):
    """A file over ``READ_BYTES``, which the tools do not read."""

    def __init__(self, path: str) -> None:
        super().__init__(f"larger than {READ_BYTES} bytes: {path}")


def _relative(path: str) -> str:
    """A tool's path as the tree's relative form (``.``, ``./a`` and ``a/`` accepted)."""
    cleaned = path.strip()
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    cleaned = cleaned.rstrip("/") if cleaned not in ("", "/") else cleaned
    return "" if cleaned in ("", ".") else cleaned


def _error(text: str) -> ToolResult:
    return ToolResult(text=f"Error: {text}", is_error=True)


def _path_error(path: str, error: Exception) -> ToolResult:
    if isinstance(error, TreePathError):
        return _error(f"{path}: outside the project folder ({error})")
    if isinstance(error, FileNotFoundError):
        return _error(f"{path}: no such file or directory")
    if isinstance(error, IsADirectoryError | SpecialFileError):
        return _error(f"{path}: not a regular file")
    if isinstance(error, FileTooLargeError):
        return _error(f"{path}: the file is larger than {READ_BYTES} bytes; use run_command")
    if isinstance(error, ReadOnlyTreeError):
        return _error("this project folder is read-only")
    return _error(f"{path}: {type(error).__name__}: {error}")


_FILE_ERRORS = (TreePathError, OSError)


async def _read_text(tree: FileTree, path: str) -> str:
    part = await tree.read_head(_relative(path), READ_BYTES + 1)
    if len(part.data) > READ_BYTES:
        raise FileTooLargeError(path)
    return part.data.decode("utf-8", errors="replace")


async def run_command(workspace: Workspace, arguments: RunCommandArguments) -> ToolResult:
    tree = workspace.tree
    run = await run_project_command(
        await tree.host_directory(),
        arguments.command,
        timeout=arguments.timeout,
        keep_changes=workspace.keep_changes,
        quota=tree.quota,
    )
    if workspace.keep_changes and tree.quota is not None:
        tree.limit_size(tree.quota, await tree.measure())  # the command wrote past the tree
    return ToolResult(text=run.text(), is_error=run.timed_out or run.exit_code != 0, wrote=None)


async def read_file(workspace: Workspace, arguments: ReadFileArguments) -> ToolResult:
    try:
        text = await _read_text(workspace.tree, arguments.path)
    except _FILE_ERRORS as error:
        return _path_error(arguments.path, error)
    lines = text.splitlines()
    if not lines:
        return ToolResult(text=f"({arguments.path} is empty)")
    shown = lines[arguments.offset - 1 : arguments.offset - 1 + arguments.limit]
    if not shown:
        return _error(f"{arguments.path} has {len(lines)} lines; offset {arguments.offset}")
    numbered = []
    for number, line in enumerate(shown, start=arguments.offset):
        cut = line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [line cut]"
        numbered.append(f"{number:>6}\t{cut}")
    rest = len(lines) - (arguments.offset - 1 + len(shown))
    if rest > 0:
        numbered.append(f"[{rest} more lines; read on with offset {arguments.offset + len(shown)}]")
    return ToolResult(text="\n".join(numbered))


async def write_file(workspace: Workspace, arguments: WriteFileArguments) -> ToolResult:
    data = arguments.content.encode("utf-8")
    if len(data) > WRITE_BYTES:
        return _error(f"content of {len(data)} bytes is over the {WRITE_BYTES}-byte limit")
    relative = _relative(arguments.path)
    parent = relative.rpartition("/")[0]
    try:
        existed = await _exists(workspace.tree, relative)
        if parent:
            await workspace.tree.make_directory(parent)
        await workspace.tree.write_bytes(relative, data)
    except _FILE_ERRORS as error:
        return _path_error(arguments.path, error)
    verb = "Replaced" if existed else "Created"
    return ToolResult(text=f"{verb} {arguments.path} ({len(data)} bytes)", wrote=True)


async def _exists(tree: FileTree, relative: str) -> bool:
    try:
        await tree.stat(relative)
    except FileNotFoundError:
        return False
    return True


async def edit_file(workspace: Workspace, arguments: EditFileArguments) -> ToolResult:
    try:
        text = await _read_text(workspace.tree, arguments.path)
    except _FILE_ERRORS as error:
        return _path_error(arguments.path, error)
    count = text.count(arguments.old_string)
    if count == 0:
        return _error(f"old_string not found in {arguments.path}")
    if count > 1 and not arguments.replace_all:
        return _error(
            f"old_string occurs {count} times in {arguments.path}; give more context to make it "
            "unique, or set replace_all"
        )
    changed = text.replace(arguments.old_string, arguments.new_string)
    data = changed.encode("utf-8")
    if len(data) > WRITE_BYTES:
        return _error(f"the edited file would be over the {WRITE_BYTES}-byte limit")
    try:
        await workspace.tree.write_bytes(_relative(arguments.path), data)
    except _FILE_ERRORS as error:
        return _path_error(arguments.path, error)
    noun = "occurrence" if count == 1 else "occurrences"
    return ToolResult(text=f"Edited {arguments.path}: replaced {count} {noun}", wrote=True)


async def list_files(workspace: Workspace, arguments: ListFilesArguments) -> ToolResult:
    try:
        entries = await workspace.tree.walk(_relative(arguments.path))
    except _FILE_ERRORS as error:
        return _path_error(arguments.path, error)
    lines = []
    for entry in entries[:LIST_ENTRIES]:
        suffix = {"directory": "/", "symlink": " (symlink)"}.get(entry.kind, "")
        lines.append(f"{entry.path}{suffix}")
    if len(entries) > LIST_ENTRIES:
        lines.append(f"[{len(entries) - LIST_ENTRIES} more entries not shown]")
    return ToolResult(text="\n".join(lines) if lines else "(no files)")


async def search_files(workspace: Workspace, arguments: SearchFilesArguments) -> ToolResult:
    try:
        re.compile(arguments.pattern)
        relative = await workspace.tree.resolve(_relative(arguments.path))
        await workspace.tree.stat(relative)
    except re.error as error:
        return _error(f"invalid pattern: {error}")
    except _FILE_ERRORS as error:
        return _path_error(arguments.path, error)
    include = f" --include={shlex.quote(arguments.glob)}" if arguments.glob else ""
    command = (
        f"grep -rnIE{include} -e {shlex.quote(arguments.pattern)} -- "
        f"{shlex.quote(relative or '.')} | LC_ALL=C sort -t: -k1,1 -k2,2n"
        f" | head -n {SEARCH_LINES + 1}"
    )
    directory = await workspace.tree.host_directory()
    run = await run_project_command(directory, command, timeout=30.0, keep_changes=False)
    if run.timed_out:
        return _error("the search ran out of time")
    lines = [line.removeprefix("./") for line in run.output.splitlines() if line]
    if len(lines) > SEARCH_LINES:
        lines = [*lines[:SEARCH_LINES], f"[more than {SEARCH_LINES} matches; narrow the search]"]
    return ToolResult(text="\n".join(lines) if lines else "No matches")


def _spec(
    name: str,
    arguments: type[ToolArguments],
    handler: Any,
    description: str,
    *,
    writes: bool,
    destructive: bool = False,
    idempotent: bool = False,
) -> ToolSpec[Workspace]:
    return ToolSpec(
        name=name,
        arguments=arguments,
        handler=handler,
        writes=writes,
        description=description,
        destructive=destructive,
        idempotent=idempotent,
    )


RUN_COMMAND = _spec(
    "run_command",
    RunCommandArguments,
    run_command,
    "Run a shell command (bash) in the project folder: tests, linters, the program. No network; "
    "killed after `timeout` seconds; long output is cut in the middle. The result ends with the "
    "exit code.",
    writes=True,
    destructive=True,
)
READ_FILE = _spec(
    "read_file",
    ReadFileArguments,
    read_file,
    "Read a text file of the project, with line numbers; `offset` and `limit` choose the lines.",
    writes=False,
    idempotent=True,
)
WRITE_FILE = _spec(
    "write_file",
    WriteFileArguments,
    write_file,
    "Create or overwrite a file of the project with the given content (folders are made).",
    writes=True,
    destructive=True,
    idempotent=True,
)
EDIT_FILE = _spec(
    "edit_file",
    EditFileArguments,
    edit_file,
    "Replace an exact piece of text in a file; it must occur once unless replace_all is set.",
    writes=True,
    destructive=True,
)
LIST_FILES = _spec(
    "list_files",
    ListFilesArguments,
    list_files,
    "List every file and folder below a folder of the project, one path per line.",
    writes=False,
    idempotent=True,
)
SEARCH_FILES = _spec(
    "search_files",
    SearchFilesArguments,
    search_files,
    "Search the project's text files for a regular expression; answers path:line: text.",
    writes=False,
    idempotent=True,
)

AGENT_TOOLS: dict[str, ToolSpec[Workspace]] = {
    spec.name: spec for spec in (RUN_COMMAND, READ_FILE, WRITE_FILE, EDIT_FILE)
}
"""The recorded coding agents' tools (replay re-executes these)."""

JUDGE_READING_TOOLS: dict[str, ToolSpec[Workspace]] = {
    spec.name: spec for spec in (READ_FILE, LIST_FILES, SEARCH_FILES, RUN_COMMAND)
}
"""A judge's tools on the read-only end state (``run_command`` works on a throwaway copy)."""

JUDGE_WRITING_TOOLS: dict[str, ToolSpec[Workspace]] = {
    **JUDGE_READING_TOOLS,
    WRITE_FILE.name: WRITE_FILE,
    EDIT_FILE.name: EDIT_FILE,
}
"""A writable judge's tools on its private clone."""

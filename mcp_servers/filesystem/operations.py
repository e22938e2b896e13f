"""The 14 tools of ``@modelcontextprotocol/server-filesystem``, re-implemented over a ``FileTree``.

Owns the tool surface (names, parameters, output text, error text) and the path rule of the
reference server, with the tree's root as its one allowed directory. Paths the agent gives are
absolute (under the root) or relative to the root; they are checked, resolved and translated to
the relative paths ``FileTree`` takes. Nothing here touches the host filesystem directly, except
to word the refusal of a symlink that escapes a tree living on this host.

Which version of the reference server this follows (it has changed over time):

* Tool semantics, path rule and output formats follow the current ``lib.ts`` / ``server.ts``:
  relative paths resolve against the allowed directory; a path that does not exist yet resolves
  through its existing part, so ``create_directory`` makes nested directories and reading a
  missing file in a missing directory fails with ``ENOENT``; ``search_files`` matches a glob
  (minimatch, ``dot: true``) against paths relative to the search root; ``move_file`` refuses an
  existing destination with ``Destination already exists: <path>``; ``edit_file`` writes LF line
  endings and re-indents only like the pre-1.0 matcher.
* Failures read ``Error: <message>`` as the server answered before it moved to ``McpServer`` (the
  form recorded MCPMark runs contain); current releases send the bare message.
* Failure messages are Node.js's (``ENOENT: no such file or directory, open '<path>'``, ...),
  with the path the reference server would have used: the resolved, absolute one.
* ``get_file_info`` prints times like JavaScript's ``Date.prototype.toString`` in the local time
  zone; ``created`` is the birth time when the tree reports one, else the inode change time.
* ``read_media_file`` returns every file as a binary block (image, audio or other), text empty.
"""

from __future__ import annotations

import base64
import codecs
import errno as errno_module
import json
import math
import os
import posixpath
import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from mcp_servers.results import ToolArguments, ToolImage, ToolResult, ToolSpec, call_tool
from sandboxes.filesystem.local import LocalFileTree
from sandboxes.filesystem.tree import FileStat, FileTree, ReadOnlyTreeError, TreePathError

# ---------------------------------------------------------------------------------------------
# Argument models (field docstrings become the tool's parameter descriptions)
# ---------------------------------------------------------------------------------------------


class _FilesystemArguments(ToolArguments):
    """Arguments of a reference-server tool: zod refuses ``null`` for optional parameters too."""

    model_config = ConfigDict(
        extra="ignore", use_attribute_docstrings=True, frozen=True, strict=True
    )

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("Expected a value, received null")
        return value


class PathArguments(_FilesystemArguments):
    """A single path."""

    path: str
    """Path of the file or directory: absolute inside the allowed directory, or relative to it."""


class ReadTextFileArguments(PathArguments):
    """``read_text_file`` / ``read_file``."""

    head: float | None = None
    """If provided, returns only the first N lines of the file."""
    tail: float | None = None
    """If provided, returns only the last N lines of the file."""


class ReadMultipleFilesArguments(_FilesystemArguments):
    """``read_multiple_files``."""

    paths: list[str] = Field(min_length=1)
    """Array of file paths to read. Each path must be a string pointing to a valid file within
    allowed directories."""


class WriteFileArguments(PathArguments):
    """``write_file``."""

    content: str
    """The complete new content of the file (UTF-8 text)."""


class EditOperation(_FilesystemArguments):
    """One replacement inside ``edit_file``."""

    old_text: str = Field(alias="oldText")
    """Text to search for - must match exactly."""
    new_text: str = Field(alias="newText")
    """Text to replace with."""


class EditFileArguments(PathArguments):
    """``edit_file``."""

    edits: list[EditOperation]
    """The replacements to apply, in order."""
    dry_run: bool = Field(default=False, alias="dryRun")
    """Preview changes using git-style diff format."""


class ListDirectoryWithSizesArguments(PathArguments):
    """``list_directory_with_sizes``."""

    sort_by: Literal["name", "size"] = Field(default="name", alias="sortBy")
    """Sort entries by name or size."""


class DirectoryTreeArguments(PathArguments):
    """``directory_tree``."""

    exclude_patterns: list[str] = Field(default_factory=list, alias="excludePatterns")
    """Glob patterns of entries to leave out (a bare name excludes it at any depth)."""


class MoveFileArguments(_FilesystemArguments):
    """``move_file``."""

    source: str
    """The file or directory to move or rename."""
    destination: str
    """Its new path; must not exist yet."""


class SearchFilesArguments(PathArguments):
    """``search_files``."""

    pattern: str
    """Glob pattern matched against paths relative to ``path`` (``*.md`` at the top level,
    ``**/*.md`` at any depth)."""
    exclude_patterns: list[str] = Field(default_factory=list, alias="excludePatterns")
    """Glob patterns of relative paths to skip (with everything below them)."""


class NoArguments(_FilesystemArguments):
    """A tool without parameters."""


# ---------------------------------------------------------------------------------------------
# Failures worded like the reference server (Node.js)
# ---------------------------------------------------------------------------------------------


class _ToolError(Exception):
    """A tool failure; ``str()`` is the message the server would send (without ``Error: ``)."""


_ERRNO_TEXT = {
    "ENOENT": "no such file or directory",
    "EEXIST": "file already exists",
    "ENOTDIR": "not a directory",
    "EISDIR": "illegal operation on a directory",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "EROFS": "read-only file system",
    "EINVAL": "invalid argument",
    "ENOTEMPTY": "directory not empty",
    "EXDEV": "cross-device link not permitted",
    "ELOOP": "too many symbolic links encountered",
    "ENAMETOOLONG": "name too long",
    "ENOSPC": "no space left on device",
    "EBUSY": "resource busy or locked",
}


def _node_error(code: str, syscall: str, path: str | None = None, dest: str | None = None) -> str:
    """Node's ``uvException`` message: ``CODE: description, syscall 'path' -> 'dest'``."""
    text = f"{code}: {_ERRNO_TEXT.get(code, code.lower())}, {syscall}"
    if path is not None:
        text += f" '{path}'"
    if dest is not None:
        text += f" -> '{dest}'"
    return text


_ERROR_CODES: list[tuple[type[OSError], str]] = [
    (ReadOnlyTreeError, "EROFS"),
    (FileNotFoundError, "ENOENT"),
    (FileExistsError, "EEXIST"),
    (NotADirectoryError, "ENOTDIR"),
    (IsADirectoryError, "EISDIR"),
]


def _errno_code(error: OSError) -> str:
    for kind, code in _ERROR_CODES:
        if isinstance(error, kind):
            return code
    if error.errno is not None and error.errno in errno_module.errorcode:
        return errno_module.errorcode[error.errno]
    return "EACCES" if isinstance(error, PermissionError) else "EIO"


def _os_failure(error: OSError, syscall: str, path: str, dest: str | None = None) -> _ToolError:
    code = _errno_code(error)
    if code == "EISDIR" and syscall == "read":
        return _ToolError(_node_error(code, "read"))
    return _ToolError(_node_error(code, syscall, path, dest))


# ---------------------------------------------------------------------------------------------
# The path rule
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Resolved:
    """A validated path: where the reference server would operate, absolute and for the tree."""

    absolute: str
    relative: str
    stat: FileStat | None
    """``lstat`` of the resolved path (so never a symlink), None when it does not exist."""


def _join(root: str, relative: str) -> str:
    if not relative:
        return root
    return root.rstrip("/") + "/" + relative


def _expand_home(path: str) -> str:
    if path == "~" or path.startswith("~/"):
        return os.path.expanduser("~").rstrip("/") + path[1:]
    return path


def _normalise_absolute(path: str) -> str:
    """Like Node's ``path.resolve`` on an absolute POSIX path (one leading slash, no dots)."""
    normal = posixpath.normpath(path)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def _inside(path: str, root: str) -> bool:
    if "\x00" in path:
        return False
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def _escape_message(tree: FileTree, relative: str, absolute: str) -> str:
    """Word a symlink escape as the reference would.

    Only a tree on this host can say where a link leads; for others the requested path stands
    in for the link's real target.
    """
    root = tree.root
    outside = "Access denied - symlink target outside allowed directories"
    if not isinstance(tree, LocalFileTree):
        return f"{outside}: {absolute} not in {root}"
    if os.path.exists(absolute):
        return f"{outside}: {os.path.realpath(absolute)} not in {root}"
    parts = relative.split("/")
    for count in range(1, len(parts) + 1):
        prefix = _join(root, "/".join(parts[:count]))
        if not os.path.lexists(prefix):
            break
        if not os.path.exists(prefix):
            return f"Parent directory does not exist: {posixpath.dirname(absolute)}"
        real = os.path.realpath(prefix)
        if not _inside(real, root):
            return (
                "Access denied - parent directory outside allowed directories:"
                f" {real} not in {root}"
            )
    return f"{outside}: {os.path.realpath(absolute)} not in {root}"


async def _validate(tree: FileTree, requested: str) -> _Resolved:
    root = tree.root
    expanded = _expand_home(requested)
    if re.match(r"^[A-Za-z]:(?:[\\/]|$)", expanded):
        raise _ToolError(
            f"Access denied - Windows-style path received on a POSIX host: {requested}"
        )
    if expanded.startswith("/"):
        absolute = _normalise_absolute(expanded)
    else:
        absolute = _normalise_absolute(posixpath.join(root, expanded))
    if not _inside(absolute, root):
        raise _ToolError(
            f"Access denied - path outside allowed directories: {absolute} not in {root}"
        )
    relative = absolute[len(root) :].lstrip("/")
    try:
        resolved = await tree.resolve(relative)
    except TreePathError:
        raise _ToolError(_escape_message(tree, relative, absolute)) from None
    try:
        stat = await _stat(tree, resolved)
    except FileNotFoundError:
        await _refuse_dangling_link(tree, relative, absolute)
        return _Resolved(_join(root, resolved), resolved, None)
    except NotADirectoryError:
        raise _ToolError(_node_error("ENOTDIR", "realpath", absolute)) from None
    return _Resolved(_join(root, resolved), resolved, stat)


async def _stat(tree: FileTree, relative: str) -> FileStat:
    """``tree.stat``, tolerating backends that refuse to ``lstat`` the root itself."""
    try:
        return await tree.stat(relative)
    except TreePathError:
        if relative:
            raise
    if isinstance(tree, LocalFileTree):
        result = os.lstat(tree.root)
        return FileStat(
            path="",
            kind="directory",
            size=result.st_size,
            mode=result.st_mode & 0o7777,
            modified=result.st_mtime,
            accessed=result.st_atime,
            changed=result.st_ctime,
            created=getattr(result, "st_birthtime", None),
        )
    return FileStat(
        path="",
        kind="directory",
        size=0,
        mode=0o755,
        modified=0,
        accessed=0,
        changed=0,
        created=None,
    )


async def _refuse_dangling_link(tree: FileTree, relative: str, absolute: str) -> None:
    """The reference cannot resolve through a broken symlink and blames the parent directory."""
    parts = relative.split("/") if relative else []
    for count in range(1, len(parts) + 1):
        prefix = "/".join(parts[:count])
        try:
            entry = await tree.stat(prefix)
        except OSError:
            return
        if entry.kind != "symlink":
            continue
        try:
            await tree.stat(await tree.resolve(prefix))
        except (OSError, TreePathError):
            raise _ToolError(
                f"Parent directory does not exist: {posixpath.dirname(absolute)}"
            ) from None


# ---------------------------------------------------------------------------------------------
# JavaScript behaviours the output formats depend on
# ---------------------------------------------------------------------------------------------


def _utf16_length(text: str) -> int:
    return sum(2 if ord(character) > 0xFFFF else 1 for character in text)


def _pad_end(text: str, width: int) -> str:
    return text + " " * max(0, width - _utf16_length(text))


def _pad_start(text: str, width: int) -> str:
    return " " * max(0, width - _utf16_length(text)) + text


def _to_fixed_2(value: float) -> str:
    """``Number.prototype.toFixed(2)``: exact binary value, ties rounded up."""
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def format_size(size: int) -> str:
    """The reference's human-readable size: ``0 B``, ``512 B``, ``1.50 KB``, ... ``TB``."""
    units = ["B", "KB", "MB", "GB", "TB"]
    if size <= 0:
        return "0 B"
    index = math.floor(math.log(size) / math.log(1024))
    if index <= 0:
        return f"{size} B"
    index = min(index, len(units) - 1)
    return f"{_to_fixed_2(size / 1024**index)} {units[index]}"


_WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_ZONE_NAMES = {"UTC": "Coordinated Universal Time", "UCT": "Coordinated Universal Time"}


def js_date_string(seconds: float) -> str:
    """``Date.prototype.toString()`` in the local time zone, e.g.
    ``Mon Mar 04 2024 11:00:00 GMT+0000 (Coordinated Universal Time)``.

    The zone's long name comes from ICU in Node; only UTC's is known here, other zones show
    their abbreviation.
    """
    local = time.localtime(math.floor(seconds))
    offset = local.tm_gmtoff or 0
    sign = "+" if offset >= 0 else "-"
    hours, minutes = divmod(abs(offset) // 60, 60)
    abbreviation = local.tm_zone or "UTC"
    zone = _ZONE_NAMES.get(abbreviation, abbreviation)
    return (
        f"{_WEEKDAYS[local.tm_wday]} {_MONTHS[local.tm_mon - 1]} {local.tm_mday:02d}"
        f" {local.tm_year:04d} {local.tm_hour:02d}:{local.tm_min:02d}:{local.tm_sec:02d}"
        f" GMT{sign}{hours:02d}{minutes:02d} ({zone})"
    )


# Order of ASCII whitespace and punctuation in the root collation ICU uses for localeCompare.
_VARIABLE_ORDER = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_VARIABLE_WEIGHT = {character: index + 1 for index, character in enumerate(_VARIABLE_ORDER)}


def _collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """An approximation of ``String.prototype.localeCompare`` (ICU root collation): punctuation,
    then digits, then letters case- and accent-blind, then accents, then lowercase first."""
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for character in text:
        if character == "ß":  # sorts as "ss", after a real "ss"
            primary += [1000 + ord("s")] * 2
            secondary += [0, 0]
            tertiary += [2, 2]
            continue
        decomposed = unicodedata.normalize("NFD", character)
        base, marks = decomposed[0], decomposed[1:]
        if base in _VARIABLE_WEIGHT:
            primary.append(_VARIABLE_WEIGHT[base])
        elif base.isdigit() and base.isascii():
            primary.append(100 + int(base))
        elif base.isalpha():
            primary.append(1000 + ord(base.lower()))
        else:
            primary.append(200 + ord(base) if ord(base) < 800 else 1_000_000 + ord(base))
        secondary.append(sum(ord(mark) for mark in marks))
        tertiary.append(1 if base.isupper() else 0)
    return tuple(primary), tuple(secondary), tuple(tertiary)


_JS_WHITESPACE = (
    " \t\n\x0b\x0c\r\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _leading_whitespace(text: str) -> str:
    return text[: len(text) - len(text.lstrip(_JS_WHITESPACE))]


def _utf8(text: str) -> bytes:
    """Encode like Node: lone surrogates become U+FFFD."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------
# Glob matching (minimatch with ``dot: true``)
# ---------------------------------------------------------------------------------------------

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\r\\n\\v\\f",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "A-Fa-f0-9",
}


def _expand_braces(pattern: str) -> list[str]:
    """Brace expansion as minimatch does it: ``{a,b}`` alternatives and ``{1..3}`` ranges."""
    depth = 0
    start = -1
    index = 0
    while index < len(pattern):
        character = pattern[index]
        if character == "\\":
            index += 2
            continue
        if character == "{":
            if depth == 0:
                start = index
            depth += 1
        elif character == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _brace_options(pattern[start + 1 : index])
                if options is not None:
                    head, tail = pattern[:start], pattern[index + 1 :]
                    return [
                        expanded
                        for option in options
                        for expanded in _expand_braces(head + option + tail)
                    ]
        index += 1
    return [pattern]


def _brace_options(body: str) -> list[str] | None:
    sequence = re.fullmatch(r"(-?\d+)\.\.(-?\d+)", body) or re.fullmatch(
        r"([A-Za-z])\.\.([A-Za-z])", body
    )
    if sequence:
        first, last = sequence.groups()
        if first.lstrip("-").isdigit():
            low, high = int(first), int(last)
            step = 1 if high >= low else -1
            return [str(number) for number in range(low, high + step, step)]
        step = 1 if ord(last) >= ord(first) else -1
        return [chr(code) for code in range(ord(first), ord(last) + step, step)]
    options: list[str] = []
    depth = 0
    current = ""
    index = 0
    while index < len(body):
        character = body[index]
        if character == "\\" and index + 1 < len(body):
            current += body[index : index + 2]
            index += 2
            continue
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
        if character == "," and depth == 0:
            options.append(current)
            current = ""
        else:
            current += character
        index += 1
    options.append(current)
    return options if len(options) > 1 else None


def _class_regex(segment: str, start: int) -> tuple[str, int] | None:
    """Translate the bracket expression at ``segment[start]``; None if it is not closed."""
    index = start + 1
    negate = index < len(segment) and segment[index] in "!^"
    if negate:
        index += 1
    parts: list[str] = []
    first = True
    while index < len(segment):
        character = segment[index]
        if character == "]" and not first:
            body = "".join(parts)
            return (f"[^/{body}]" if negate else f"[{body}]"), index + 1
        first = False
        if character == "[" and segment.startswith("[:", index):
            end = segment.find(":]", index + 2)
            name = segment[index + 2 : end] if end != -1 else ""
            if name in _POSIX_CLASSES:
                parts.append(_POSIX_CLASSES[name])
                index = end + 2
                continue
        if character == "\\" and index + 1 < len(segment):
            parts.append(re.escape(segment[index + 1]))
            index += 2
            continue
        if character == "-" and parts and index + 1 < len(segment) and segment[index + 1] != "]":
            parts.append("-")
        else:
            parts.append(re.escape(character))
        index += 1
    return None


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        character = segment[index]
        if character in "+@!*?" and segment.startswith("(", index + 1):
            closing = _closing_paren(segment, index + 1)
            if closing is not None:
                alternatives = "|".join(
                    _segment_regex(option)
                    for option in _split_alternatives(segment[index + 2 : closing])
                )
                out.append(
                    {
                        "+": f"(?:{alternatives})+",
                        "*": f"(?:{alternatives})*",
                        "?": f"(?:{alternatives})?",
                        "@": f"(?:{alternatives})",
                        "!": f"(?:(?!(?:{alternatives})$)[^/]*?)",
                    }[character]
                )
                index = closing + 1
                continue
        if character == "\\" and index + 1 < len(segment):
            out.append(re.escape(segment[index + 1]))
            index += 2
        elif character == "*":
            while index < len(segment) and segment[index] == "*":
                index += 1
            out.append("[^/]*")
        elif character == "?":
            out.append("[^/]")
            index += 1
        elif character == "[":
            translated = _class_regex(segment, index)
            if translated is None:
                out.append(re.escape(character))
                index += 1
            else:
                out.append(translated[0])
                index = translated[1]
        else:
            out.append(re.escape(character))
            index += 1
    return "".join(out)


def _closing_paren(text: str, opening: int) -> int | None:
    depth = 0
    index = opening
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _split_alternatives(body: str) -> list[str]:
    options: list[str] = []
    depth = 0
    current = ""
    for character in body:
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        if character == "|" and depth == 0:
            options.append(current)
            current = ""
        else:
            current += character
    options.append(current)
    return options


@lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> tuple[tuple[re.Pattern[str] | None, ...], ...]:
    compiled = []
    for alternative in _expand_braces(pattern):
        segments: list[re.Pattern[str] | None] = []
        for segment in alternative.split("/"):
            if segment == "**":
                if segments and segments[-1] is None:
                    continue
                segments.append(None)
            else:
                segments.append(re.compile(_segment_regex(segment), re.DOTALL))
        compiled.append(tuple(segments))
    return tuple(compiled)


def _match_segments(
    parts: list[str], pattern: tuple[re.Pattern[str] | None, ...], part: int, index: int
) -> bool:
    while index < len(pattern):
        segment = pattern[index]
        if segment is None:  # a ``**`` segment
            if index == len(pattern) - 1:
                return part < len(parts)
            return any(
                _match_segments(parts, pattern, start, index + 1)
                for start in range(part, len(parts) + 1)
            )
        if part >= len(parts) or not segment.fullmatch(parts[part]):
            return False
        part += 1
        index += 1
    return part == len(parts)


def glob_match(path: str, pattern: str) -> bool:
    """Whether a relative POSIX ``path`` matches a minimatch ``pattern`` (``dot: true``).

    Covers ``*``, ``?``, ``[...]`` (with ``!``/``^`` and POSIX classes), ``**`` as a whole
    segment, ``{a,b}`` and ``{1..3}``, extglobs ``+(..)``, ``*(..)``, ``?(..)``, ``@(..)`` and
    (approximately) ``!(..)``, a leading ``!`` negation and ``#`` comments.
    """
    if pattern.startswith("#"):
        return False
    negated = False
    while pattern.startswith("!") and not pattern.startswith("!("):
        negated = not negated
        pattern = pattern[1:]
    parts = path.split("/")
    matched = any(_match_segments(parts, compiled, 0, 0) for compiled in _compile_glob(pattern))
    return matched != negated


# ---------------------------------------------------------------------------------------------
# Unified diffs as the ``diff`` npm package writes them (createTwoFilesPatch, 4 context lines)
# ---------------------------------------------------------------------------------------------


@dataclass
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None = None
    tokens: list[str] = field(default_factory=list)


@dataclass
class _DiffPath:
    old_pos: int
    last: _Component | None


def _tokenize_lines(text: str) -> list[str]:
    pieces = re.split(r"(\n|\r\n)", text)
    if not pieces[-1]:
        pieces.pop()
    tokens: list[str] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            tokens[-1] += piece
        else:
            tokens.append(piece)
    return [token for token in tokens if token]


def _extend_common(path: _DiffPath, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while (
        new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]
    ):
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _extend_path(path: _DiffPath, *, added: bool, removed: bool, step: int) -> _DiffPath:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return _DiffPath(
            path.old_pos + step, _Component(last.count + 1, added, removed, last.previous)
        )
    return _DiffPath(path.old_pos + step, _Component(1, added, removed, last))


def _components(last: _Component | None, new: list[str], old: list[str]) -> list[_Component]:
    chain: list[_Component] = []
    while last is not None:
        chain.append(last)
        last = last.previous
    chain.reverse()
    new_pos = old_pos = 0
    for component in chain:
        if component.removed:
            component.tokens = old[old_pos : old_pos + component.count]
            old_pos += component.count
        else:
            component.tokens = new[new_pos : new_pos + component.count]
            new_pos += component.count
            if not component.added:
                old_pos += component.count
    return chain


def diff_lines(old_text: str, new_text: str) -> list[_Component]:
    """jsdiff's ``diffLines``: Myers' algorithm with its exact tie-breaking (removals first)."""
    old = _tokenize_lines(old_text)
    new = _tokenize_lines(new_text)
    unbounded = len(old) + len(new) + 10
    initial = _DiffPath(-1, None)
    new_pos = _extend_common(initial, new, old, 0)
    if initial.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
        return _components(initial.last, new, old)
    best: dict[int, _DiffPath | None] = {0: initial}
    lowest, highest = -unbounded, unbounded
    if initial.old_pos + 1 >= len(old):
        highest = -1
    if new_pos + 1 >= len(new):
        lowest = 1
    for edit_length in range(1, len(old) + len(new) + 1):
        diagonal = max(lowest, -edit_length)
        while diagonal <= min(highest, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path.old_pos - diagonal < len(new)
            can_remove = remove_path is not None and remove_path.old_pos + 1 < len(old)
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (
                can_add
                and remove_path is not None
                and add_path is not None
                and remove_path.old_pos < add_path.old_pos
            ):
                assert add_path is not None
                path = _extend_path(add_path, added=True, removed=False, step=0)
            else:
                assert remove_path is not None
                path = _extend_path(remove_path, added=False, removed=True, step=1)
            new_pos = _extend_common(path, new, old, diagonal)
            if path.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
                return _components(path.last, new, old)
            best[diagonal] = path
            if path.old_pos + 1 >= len(old):
                highest = min(highest, diagonal - 1)
            if new_pos + 1 >= len(new):
                lowest = max(lowest, diagonal + 1)
            diagonal += 2
    return []  # unreachable: an edit script of length len(old) + len(new) always exists


def unified_diff(old_text: str, new_text: str, filename: str, context: int = 4) -> str:
    """``createTwoFilesPatch(filename, filename, old, new, 'original', 'modified')``."""
    changes = [*diff_lines(old_text, new_text), _Component(0, False, False)]
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    old_start = new_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, change in enumerate(changes):
        lines = change.tokens
        if change.added or change.removed:
            if not old_start:
                old_start, new_start = old_line, new_line
                if index > 0:
                    previous = changes[index - 1].tokens
                    current = [" " + line for line in previous[-context:]] if context > 0 else []
                    old_start -= len(current)
                    new_start -= len(current)
            current.extend(("+" if change.added else "-") + line for line in lines)
            if change.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_start:
                if len(lines) <= context * 2 and index < len(changes) - 2:
                    current.extend(" " + line for line in lines)
                else:
                    size = min(len(lines), context)
                    current.extend(" " + line for line in lines[:size])
                    hunks.append(
                        (
                            old_start,
                            old_line - old_start + size,
                            new_start,
                            new_line - new_start + size,
                            current,
                        )
                    )
                    old_start = new_start = 0
                    current = []
            old_line += len(lines)
            new_line += len(lines)
    return _format_patch(filename, hunks)


def _format_patch(filename: str, hunks: list[tuple[int, int, int, int, list[str]]]) -> str:
    """jsdiff's ``formatPatch``: headers, hunks, and the no-newline-at-end markers."""
    output = [
        f"Index: {filename}",
        "=" * 67,
        f"--- {filename}\toriginal",
        f"+++ {filename}\tmodified",
    ]
    for old_first, old_count, new_first, new_count, hunk_lines in hunks:
        output.append(
            f"@@ -{old_first - 1 if old_count == 0 else old_first},{old_count}"
            f" +{new_first - 1 if new_count == 0 else new_first},{new_count} @@"
        )
        for line in hunk_lines:
            if line.endswith("\n"):
                output.append(line[:-1])
            else:
                output.extend([line, "\\ No newline at end of file"])
    return "\n".join(output) + "\n"


def _apply_edits(content: str, edits: Iterable[EditOperation]) -> str:
    """The reference's edit matcher: exact substring first, else whitespace-blind line runs."""
    modified = content
    for edit in edits:
        old = edit.old_text.replace("\r\n", "\n")
        new = edit.new_text.replace("\r\n", "\n")
        if old in modified:
            modified = modified.replace(old, new, 1)
            continue
        old_lines = old.split("\n")
        content_lines = modified.split("\n")
        for start in range(len(content_lines) - len(old_lines) + 1):
            window = content_lines[start : start + len(old_lines)]
            if all(
                a.strip(_JS_WHITESPACE) == b.strip(_JS_WHITESPACE)
                for a, b in zip(old_lines, window, strict=True)
            ):
                indent = _leading_whitespace(content_lines[start])
                replacement = []
                for position, line in enumerate(new.split("\n")):
                    if position == 0:
                        replacement.append(indent + line.lstrip(_JS_WHITESPACE))
                        continue
                    old_indent = (
                        _leading_whitespace(old_lines[position])
                        if position < len(old_lines)
                        else ""
                    )
                    new_indent = _leading_whitespace(line)
                    if old_indent and new_indent:
                        shift = max(0, len(new_indent) - len(old_indent))
                        replacement.append(indent + " " * shift + line.lstrip(_JS_WHITESPACE))
                    else:
                        replacement.append(line)
                content_lines[start : start + len(old_lines)] = replacement
                modified = "\n".join(content_lines)
                break
        else:
            raise _ToolError(f"Could not find exact match for edit:\n{edit.old_text}")
    return modified


# ---------------------------------------------------------------------------------------------
# Reading helpers with the reference's head / tail algorithms
# ---------------------------------------------------------------------------------------------

_CHUNK = 1024


def _js_slice_from(items: list[str], start: float) -> list[str]:
    """``Array.prototype.slice(start)`` with JavaScript's integer conversion."""
    begin = math.trunc(start)
    if begin < 0:
        begin = max(len(items) + begin, 0)
    return items[begin:]


def _tail(data: bytes, count: float) -> str:
    if not data:
        return ""
    position = len(data)
    newlines = 0
    while position > 0 and newlines < count:
        size = min(_CHUNK, position)
        position -= size
        newlines += data[position : position + size].count(b"\n")
    text = _decode(data[position:]).replace("\r\n", "\n")
    return "\n".join(_js_slice_from(text.split("\n"), -count))


def _head(data: bytes, count: float) -> str:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines: list[str] = []
    buffer = ""
    offset = 0
    while len(lines) < count:
        chunk = data[offset : offset + _CHUNK]
        if not chunk:
            break
        offset += len(chunk)
        buffer += decoder.decode(chunk)
        cut = buffer.rfind("\n")
        if cut != -1:
            complete = buffer[:cut].split("\n")
            buffer = buffer[cut + 1 :]
            for line in complete:
                lines.append(line)
                if len(lines) >= count:
                    break
    buffer += decoder.decode(b"", final=True)
    if buffer and len(lines) < count:
        lines.append(buffer)
    return "\n".join(lines)


async def _read(tree: FileTree, target: _Resolved, syscall: str = "open") -> bytes:
    try:
        return await tree.read_bytes(target.relative)
    except IsADirectoryError as error:
        raise _os_failure(error, "read", target.absolute) from None
    except OSError as error:
        raise _os_failure(error, syscall, target.absolute) from None


def _ok(text: str) -> ToolResult:
    return ToolResult(text=text)


# ---------------------------------------------------------------------------------------------
# The tools
# ---------------------------------------------------------------------------------------------


async def read_text_file(tree: FileTree, args: ReadTextFileArguments) -> ToolResult:
    """The whole file as UTF-8 text, or its first ``head`` / last ``tail`` lines."""
    target = await _validate(tree, args.path)
    if args.head and args.tail:
        raise _ToolError("Cannot specify both head and tail parameters simultaneously")
    if args.tail:
        data = await _read(tree, target, "stat")
        return _ok(_tail(data, args.tail))
    data = await _read(tree, target)
    if args.head:
        return _ok(_head(data, args.head))
    return _ok(_decode(data))


_MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
}


async def read_media_file(tree: FileTree, args: PathArguments) -> ToolResult:
    """The file base64-encoded with its MIME type (from the extension)."""
    target = await _validate(tree, args.path)
    mime_type = _MEDIA_TYPES.get(
        posixpath.splitext(target.absolute)[1].lower(), "application/octet-stream"
    )
    data = await _read(tree, target)
    image = ToolImage(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
    return ToolResult(text="", images=[image])


async def read_multiple_files(tree: FileTree, args: ReadMultipleFilesArguments) -> ToolResult:
    """Every file's content under its path; a file that fails shows its error in place."""
    parts: list[str] = []
    for path in args.paths:
        try:
            target = await _validate(tree, path)
            parts.append(f"{path}:\n{_decode(await _read(tree, target))}\n")
        except _ToolError as failure:
            parts.append(f"{path}: Error - {failure}")
    return _ok("\n---\n".join(parts))


async def write_file(tree: FileTree, args: WriteFileArguments) -> ToolResult:
    """Create or overwrite a file with ``content``."""
    target = await _validate(tree, args.path)
    if target.stat is not None and target.stat.kind == "directory":
        raise _ToolError(_node_error("EISDIR", "open", target.absolute))
    try:
        await tree.write_bytes(target.relative, _utf8(args.content))
    except OSError as error:
        raise _os_failure(error, "open", target.absolute) from None
    return _ok(f"Successfully wrote to {args.path}")


async def edit_file(tree: FileTree, args: EditFileArguments) -> ToolResult:
    """Apply replacements and return the git-style diff; ``dryRun`` leaves the file alone."""
    target = await _validate(tree, args.path)
    content = _decode(await _read(tree, target)).replace("\r\n", "\n")
    modified = _apply_edits(content, args.edits)
    diff = unified_diff(content, modified, target.absolute)
    ticks = 3
    while "`" * ticks in diff:
        ticks += 1
    fence = "`" * ticks
    if not args.dry_run:
        try:
            await tree.write_bytes(target.relative, _utf8(modified))
        except OSError as error:
            raise _os_failure(error, "open", target.absolute) from None
    return _ok(f"{fence}diff\n{diff}{fence}\n\n")


async def create_directory(tree: FileTree, args: PathArguments) -> ToolResult:
    """Create a directory and its missing parents; an existing directory is fine."""
    target = await _validate(tree, args.path)
    if target.stat is None or target.stat.kind != "directory":
        if target.stat is not None:
            raise _ToolError(_node_error("EEXIST", "mkdir", target.absolute))
        try:
            await tree.make_directory(target.relative)
        except OSError as error:
            raise _os_failure(error, "mkdir", target.absolute) from None
    return _ok(f"Successfully created directory {args.path}")


async def _entries(tree: FileTree, target: _Resolved) -> list[FileStat]:
    try:
        return await tree.list_directory(target.relative)
    except OSError as error:
        raise _os_failure(error, "scandir", target.absolute) from None


def _label(entry: FileStat) -> str:
    return "[DIR]" if entry.kind == "directory" else "[FILE]"


async def list_directory(tree: FileTree, args: PathArguments) -> ToolResult:
    """One ``[FILE] name`` / ``[DIR] name`` line per entry, in directory (byte) order."""
    target = await _validate(tree, args.path)
    return _ok("\n".join(f"{_label(entry)} {entry.name}" for entry in await _entries(tree, target)))


async def _followed_size(tree: FileTree, entry: FileStat) -> int:
    """``fs.stat`` size of an entry (symlinks followed; 0 when that fails, as the reference)."""
    if entry.kind != "symlink":
        return entry.size
    try:
        return (await tree.stat(await tree.resolve(entry.path))).size
    except (OSError, TreePathError):
        return 0


async def list_directory_with_sizes(
    tree: FileTree, args: ListDirectoryWithSizesArguments
) -> ToolResult:
    """Entries with file sizes, sorted by name or by size (largest first), and totals."""
    target = await _validate(tree, args.path)
    entries = [(entry, await _followed_size(tree, entry)) for entry in await _entries(tree, target)]
    if args.sort_by == "size":
        ordered = sorted(entries, key=lambda item: -item[1])
    else:
        ordered = sorted(entries, key=lambda item: _collation_key(item[0].name))
    lines = [
        f"{_label(entry)} {_pad_end(entry.name, 30)} "
        + ("" if entry.kind == "directory" else _pad_start(format_size(size), 10))
        for entry, size in ordered
    ]
    files = [size for entry, size in entries if entry.kind != "directory"]
    directories = len(entries) - len(files)
    lines += [
        "",
        f"Total: {len(files)} files, {directories} directories",
        f"Combined size: {format_size(sum(files))}",
    ]
    return _ok("\n".join(lines))


def _tree_excluded(relative: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if "*" in pattern:
            if glob_match(relative, pattern):
                return True
        elif (
            glob_match(relative, pattern)
            or glob_match(relative, f"**/{pattern}")
            or glob_match(relative, f"**/{pattern}/**")
        ):
            return True
    return False


async def directory_tree(tree: FileTree, args: DirectoryTreeArguments) -> ToolResult:
    """The recursive ``{name, type, children}`` JSON of a directory, indented by 2."""

    async def build(path: str, prefix: str) -> list[dict[str, Any]]:
        target = await _validate(tree, path)
        result: list[dict[str, Any]] = []
        for entry in await _entries(tree, target):
            relative = f"{prefix}{entry.name}"
            if _tree_excluded(relative, args.exclude_patterns):
                continue
            node: dict[str, Any] = {
                "name": entry.name,
                "type": "directory" if entry.kind == "directory" else "file",
            }
            if entry.kind == "directory":
                node["children"] = await build(posixpath.join(path, entry.name), relative + "/")
            result.append(node)
        return result

    return _ok(json.dumps(await build(args.path, ""), indent=2, ensure_ascii=False))


async def move_file(tree: FileTree, args: MoveFileArguments) -> ToolResult:
    """Rename or move a file or directory; fails when the destination exists."""
    source = await _validate(tree, args.source)
    destination = await _validate(tree, args.destination)
    if destination.stat is not None:
        raise _ToolError(f"Destination already exists: {destination.absolute}")
    try:
        await tree.move(source.relative, destination.relative)
    except OSError as error:
        raise _os_failure(error, "rename", source.absolute, destination.absolute) from None
    return _ok(f"Successfully moved {args.source} to {args.destination}")


async def _usable_link(tree: FileTree, entry: FileStat) -> bool:
    """Whether the reference's per-entry path check accepts a symlink found while searching."""
    try:
        await tree.stat(await tree.resolve(entry.path))
    except (OSError, TreePathError):
        return False
    return True


async def search_files(tree: FileTree, args: SearchFilesArguments) -> ToolResult:
    """Full paths of the entries below ``path`` whose relative path matches ``pattern``."""
    target = await _validate(tree, args.path)
    if target.stat is None:
        raise _ToolError(_node_error("ENOENT", "scandir", target.absolute))
    if target.stat.kind != "directory":
        raise _ToolError(_node_error("ENOTDIR", "scandir", target.absolute))
    try:
        everything = await tree.walk(target.relative)
    except OSError as error:
        raise _os_failure(error, "scandir", target.absolute) from None
    children: dict[str, list[FileStat]] = {}
    cut = len(target.relative) + 1 if target.relative else 0
    for entry in everything:
        inner = entry.path[cut:]
        children.setdefault(posixpath.dirname(inner), []).append(entry)
    matches: list[str] = []

    async def visit(directory: str) -> None:
        for entry in sorted(children.get(directory, []), key=lambda item: item.name):
            relative = entry.path[cut:]
            if entry.kind == "symlink" and not await _usable_link(tree, entry):
                continue
            if any(glob_match(relative, pattern) for pattern in args.exclude_patterns):
                continue
            if glob_match(relative, args.pattern):
                matches.append(_join(target.absolute, relative))
            if entry.kind == "directory":
                await visit(relative)

    await visit("")
    return _ok("\n".join(matches) if matches else "No matches found")


async def get_file_info(tree: FileTree, args: PathArguments) -> ToolResult:
    """Size, times, type flags and permission bits of a file or directory."""
    target = await _validate(tree, args.path)
    if target.stat is None:
        raise _ToolError(_node_error("ENOENT", "stat", target.absolute))
    info = target.stat
    created = info.created if info.created is not None else info.changed
    lines = [
        f"size: {info.size}",
        f"created: {js_date_string(created)}",
        f"modified: {js_date_string(info.modified)}",
        f"accessed: {js_date_string(info.accessed)}",
        f"isDirectory: {'true' if info.kind == 'directory' else 'false'}",
        f"isFile: {'true' if info.kind == 'file' else 'false'}",
        f"permissions: {info.mode & 0o777:03o}",
    ]
    return _ok("\n".join(lines))


async def list_allowed_directories(tree: FileTree, args: NoArguments) -> ToolResult:
    """The one allowed directory: the tree's root."""
    return _ok(f"Allowed directories:\n{tree.root}")


# ---------------------------------------------------------------------------------------------
# The tool table and the entry point
# ---------------------------------------------------------------------------------------------

_Handler = Callable[[FileTree, Any], Any]


def _guarded(handler: _Handler) -> Callable[[FileTree, Any], Any]:
    """Turn a raised ``_ToolError`` (or an unexpected OS error) into an error result."""

    async def run(tree: FileTree, args: Any) -> ToolResult:
        try:
            result: ToolResult = await handler(tree, args)
        except _ToolError as failure:
            return ToolResult(text=f"Error: {failure}", is_error=True)
        except TreePathError as error:
            return ToolResult(text=f"Error: Access denied - {error}", is_error=True)
        return result

    run.__name__ = getattr(handler, "__name__", "tool")
    run.__doc__ = handler.__doc__
    return run


def _spec(
    name: str,
    arguments: type[ToolArguments],
    handler: _Handler,
    description: str,
    *,
    writes: bool = False,
) -> ToolSpec[FileTree]:
    return ToolSpec(name, arguments, _guarded(handler), writes, description)


FILESYSTEM_TOOLS: dict[str, ToolSpec[FileTree]] = {
    spec.name: spec
    for spec in [
        _spec(
            "read_text_file",
            ReadTextFileArguments,
            read_text_file,
            "Read the complete contents of a file as text. Use 'head' to read only the first N "
            "lines or 'tail' to read only the last N lines. Only works within allowed "
            "directories.",
        ),
        _spec(
            "read_file",
            ReadTextFileArguments,
            read_text_file,
            "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
        ),
        _spec(
            "read_media_file",
            PathArguments,
            read_media_file,
            "Read an image, audio or other binary file and return it base64-encoded with its "
            "MIME type. Only works within allowed directories.",
        ),
        _spec(
            "read_multiple_files",
            ReadMultipleFilesArguments,
            read_multiple_files,
            "Read several files at once; each content is returned under its path, and a file "
            "that cannot be read does not stop the others. Only works within allowed "
            "directories.",
        ),
        _spec(
            "write_file",
            WriteFileArguments,
            write_file,
            "Create a new file or completely overwrite an existing file with new content. "
            "Only works within allowed directories.",
            writes=True,
        ),
        _spec(
            "edit_file",
            EditFileArguments,
            edit_file,
            "Make line-based edits to a text file: each edit replaces an exact text (or a "
            "whitespace-insensitive run of lines) with new text. Returns a git-style diff of "
            "the changes; with dryRun the file is left unchanged. Only works within allowed "
            "directories.",
            writes=True,
        ),
        _spec(
            "create_directory",
            PathArguments,
            create_directory,
            "Create a directory, including missing parents; succeeds silently if it already "
            "exists. Only works within allowed directories.",
            writes=True,
        ),
        _spec(
            "list_directory",
            PathArguments,
            list_directory,
            "List the entries of a directory, each prefixed with [FILE] or [DIR]. Only works "
            "within allowed directories.",
        ),
        _spec(
            "list_directory_with_sizes",
            ListDirectoryWithSizesArguments,
            list_directory_with_sizes,
            "List the entries of a directory with [FILE]/[DIR] prefixes and file sizes, sorted "
            "by name or size, with totals. Only works within allowed directories.",
        ),
        _spec(
            "directory_tree",
            DirectoryTreeArguments,
            directory_tree,
            "Get a recursive tree of files and directories as JSON: each entry has 'name', "
            "'type' (file/directory) and, for directories, 'children'. Only works within "
            "allowed directories.",
        ),
        _spec(
            "move_file",
            MoveFileArguments,
            move_file,
            "Move or rename a file or directory. Fails if the destination exists. Both paths "
            "must be within allowed directories.",
            writes=True,
        ),
        _spec(
            "search_files",
            SearchFilesArguments,
            search_files,
            "Recursively search for files and directories whose path relative to 'path' "
            "matches a glob pattern ('*.ext' at the top level, '**/*.ext' at any depth). "
            "Returns full paths. Only searches within allowed directories.",
        ),
        _spec(
            "get_file_info",
            PathArguments,
            get_file_info,
            "Retrieve metadata about a file or directory: size, creation, modification and "
            "access times, type and permissions. Only works within allowed directories.",
        ),
        _spec(
            "list_allowed_directories",
            NoArguments,
            list_allowed_directories,
            "Returns the list of directories this server is allowed to access (subdirectories "
            "included).",
        ),
    ]
}
"""The reference server's 14 tools by name."""


async def call_filesystem_tool(
    tree: FileTree, name: str, arguments: Mapping[str, Any]
) -> ToolResult:
    """Run one filesystem tool call on ``tree`` as the reference server would answer it.

    Raises ``ToolArgumentError`` for an unknown tool or arguments that do not fit its
    parameters; every other failure comes back as ``ToolResult(is_error=True)``.
    """
    return await call_tool(FILESYSTEM_TOOLS, tree, name, arguments)

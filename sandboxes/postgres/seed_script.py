"""Reading a seed script the way psql reads it, so that it can run as SQL only.

Owns splitting a ``seed.sql`` into the statements ``psql -f`` would send one by one (each with
the line it starts on) and the data blocks of its ``COPY ... FROM stdin`` statements, and refusing
what psql would run itself rather than send: a backslash meta-command (``\\!``, ``\\connect``,
``\\set``, ``\\copy``, ``\\gexec``, ``\\i`` ...) anywhere outside quotes, comments and COPY data.
The ``\\restrict``/``\\unrestrict`` fence lines of pg_dump 17.6+ are dropped (they only guard
psql against hostile dumps).

The lexical rules are psql's: ``--`` and nested ``/* */`` comments, ``'...'`` strings (standard
conforming), ``E'...'`` strings with backslash escapes, ``"..."`` identifiers, ``$tag$``
dollar quotes, parentheses (a ``;`` inside them does not end a statement) and the ``BEGIN ...
END`` bodies of ``CREATE FUNCTION``/``PROCEDURE``. Statements are then sent to the server by the
runtime, never by psql, so no client-side command can run even where these rules and psql's
differ (psql follows the server's ``standard_conforming_strings`` and client encoding, which a
script can change): a difference can only make the server reject a malformed statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sandboxes.base import SandboxError

RESTRICT_LINE = re.compile(r"(?m)^\\(?:un)?restrict[ \t]+\S+[ \t]*\r?$")
"""pg_dump 17.6+ fences: ``\\restrict <key>`` first, ``\\unrestrict <key>`` last."""

# Whole strings are matched here, so that the many literals of a data seed cost no Python step:
# an E'' string (its E not ending a word), then a standard one; a lone quote is one left open.
_STRINGS = (
    r"(?<![\w$\u0080-\U0010ffff])[eE]'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'"
    r"|'[^']*(?:''[^']*)*'"
)
_NEXT = re.compile(_STRINGS + r"|--|/\*|[\\'\";()$]", re.DOTALL)
_NEXT_WITH_WORDS = re.compile(
    _STRINGS + r"|--|/\*|[\\'\";()$]|[A-Za-z_\u0080-\U0010ffff][\w$\u0080-\U0010ffff]*",
    re.DOTALL,
)
_SKIPPED = frozenset({"--", "/*", "'", '"', "$"})
_COMMENT_EDGE = re.compile(r"/\*|\*/")
_EXTENDED_END = re.compile(r"['\\]")
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9\u0080-\U0010ffff]*)?\$")
_BLANK = re.compile(r"\s*")
_ROUTINE_HEAD = re.compile(r"(?i)create\s+(?:or\s+replace\s+)?(?:function|procedure)\b")
_COPY_HEAD = re.compile(r"(?i)copy\b")
_MASKED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)
_FROM_STDIN = re.compile(r"(?i)\bfrom\s+stdin\b")
_COPY_END = re.compile(r"(?m)^\\\.\r?$")
_META_WORD = re.compile(r"\\(?:\\|[^\s\\]*)")


@dataclass(frozen=True)
class SeedStatement:
    """One statement of a seed, as psql would send it."""

    sql: str
    """The statement's text (from its first token to its ``;``)."""
    line: int
    """The line of the seed file it starts on (1-based)."""
    copy_data: bytes | None = None
    """For ``COPY ... FROM stdin``: the data lines psql would send (up to ``\\.``)."""


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char in "_$" or ord(char) >= 0x80


class _Lines:
    """Line numbers of positions visited in increasing order (counted incrementally)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._position = 0
        self._line = 1

    def at(self, position: int) -> int:
        if position < self._position:  # rare: restart from the top
            self._position, self._line = 0, 1
        self._line += self._text.count("\n", self._position, position)
        self._position = position
        return self._line


class _Reader:
    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path
        self.lines = _Lines(text)
        self.statements: list[SeedStatement] = []

    def fail(self, position: int, message: str) -> SandboxError:
        return SandboxError(f"seed {self.path}: line {self.lines.at(position)}: {message}")

    # --- skipping quoted text and comments ---------------------------------------------------

    def _skip_comments_and_blanks(self, position: int) -> int:
        text = self.text
        while True:
            match = _BLANK.match(text, position)
            position = match.end() if match else position
            if text.startswith("--", position):
                end = text.find("\n", position)
                position = len(text) if end < 0 else end + 1
            elif text.startswith("/*", position):
                position = self._after_block_comment(position)
            else:
                return position

    def _after_block_comment(self, position: int) -> int:
        depth, cursor = 1, position + 2
        while depth:
            match = _COMMENT_EDGE.search(self.text, cursor)
            if match is None:
                return len(self.text)
            depth += 1 if match.group() == "/*" else -1
            cursor = match.end()
        return cursor

    def _after_quoted(self, position: int, quote: str) -> int:
        """The end of a standard string or quoted identifier opened at ``position``."""
        text, cursor = self.text, position + 1
        while True:
            end = text.find(quote, cursor)
            if end < 0:
                return len(text)
            if text.startswith(quote, end + 1):  # a doubled quote stands for itself
                cursor = end + 2
                continue
            return end + 1

    def _after_extended(self, position: int) -> int:
        """The end of an ``E'...'`` string opened at ``position`` (the quote)."""
        text, cursor = self.text, position + 1
        while True:
            match = _EXTENDED_END.search(text, cursor)
            if match is None:
                return len(text)
            if match.group() == "\\" or text.startswith("'", match.end()):
                cursor = match.end() + 1  # an escaped character, or a doubled quote
            else:
                return match.end()

    # --- statements --------------------------------------------------------------------------

    def read(self) -> list[SeedStatement]:
        text, position = self.text, 0
        while True:
            position = self._skip_comments_and_blanks(position)
            if position >= len(text):
                return self.statements
            position = self._statement(position)

    def _statement(self, start: int) -> int:
        """Read the statement starting at ``start``; return where the next one may start."""
        text = self.text
        tracks_bodies = _ROUTINE_HEAD.match(text, start) is not None
        pattern = _NEXT_WITH_WORDS if tracks_bodies else _NEXT
        parentheses = bodies = 0
        cursor = start
        while True:
            match = pattern.search(text, cursor)
            if match is None:
                self._add(start, len(text))
                return len(text)
            token, at = match.group(), match.start()
            cursor = match.end()
            if len(token) > 1 and token[-1] == "'":
                pass  # a whole string literal
            elif token in _SKIPPED:
                cursor = self._after_skipped(token, at)
            elif token == "\\":
                raise self._meta_command(at)
            elif token == "(":
                parentheses += 1
            elif token == ")":
                parentheses = max(0, parentheses - 1)
            elif token == ";":
                if parentheses == 0 and bodies == 0:
                    return self._end_statement(start, cursor)
            elif parentheses == 0:  # a word, in a CREATE FUNCTION/PROCEDURE statement
                word = token.lower()
                if word == "begin" or (word == "case" and bodies >= 1):
                    bodies += 1
                elif word == "end" and bodies > 0:
                    bodies -= 1

    def _after_skipped(self, token: str, at: int) -> int:
        """Where reading resumes after the comment, quoted text or dollar quote at ``at``."""
        text = self.text
        if token == "--":
            end = text.find("\n", at)
            return len(text) if end < 0 else end + 1
        if token == "/*":
            return self._after_block_comment(at)
        if token == "'":
            extended = (
                at > 0 and text[at - 1] in "eE" and (at < 2 or not _is_word_char(text[at - 2]))
            )
            return self._after_extended(at) if extended else self._after_quoted(at, "'")
        if token == '"':
            return self._after_quoted(at, '"')
        return self._after_dollar(at)

    def _meta_command(self, at: int) -> SandboxError:
        word = _META_WORD.match(self.text, at)
        command = word.group() if word else "\\"
        return self.fail(
            at,
            f"psql meta-command {command} is not allowed: seeds are SQL only (no backslash"
            " commands such as \\! \\connect \\set \\copy \\gexec or \\i outside quotes,"
            " comments and COPY data)",
        )

    def _after_dollar(self, at: int) -> int:
        text = self.text
        if at > 0 and _is_word_char(text[at - 1]):
            return at + 1  # inside an identifier (``a$b``)
        tag = _DOLLAR_TAG.match(text, at)
        if tag is None:
            return at + 1  # a parameter (``$1``) or a lone ``$``
        end = text.find(tag.group(), tag.end())
        return len(text) if end < 0 else end + len(tag.group())

    def _end_statement(self, start: int, after: int) -> int:
        """Record the statement ``text[start:after]`` (ending with its ``;``); for a ``COPY ...
        FROM stdin``, read its data block too."""
        text = self.text
        if not _COPY_HEAD.match(text, start) or not _FROM_STDIN.search(
            _MASKED.sub(" ", text[start:after])
        ):
            self._add(start, after)
            return after
        # psql reads the data from the next line on; the rest of this line would run after it.
        line_end = text.find("\n", after)
        line_end = len(text) if line_end < 0 else line_end
        rest = text[after:line_end].strip()
        if rest and not rest.startswith("--"):
            raise self.fail(
                after,
                "SQL after `COPY ... FROM stdin;` on the same line is not supported"
                " (start the data on the next line)",
            )
        data_start = min(line_end + 1, len(text))
        terminator = _COPY_END.search(text, data_start)
        data_end = len(text) if terminator is None else terminator.start()
        self._add(start, after, copy_data=text[data_start:data_end].encode())
        return len(text) if terminator is None else terminator.end()

    def _add(self, start: int, end: int, *, copy_data: bytes | None = None) -> None:
        sql = self.text[start:end]
        if sql.strip():
            self.statements.append(SeedStatement(sql, self.lines.at(start), copy_data))


def read_seed(script: bytes, path: Path) -> list[SeedStatement]:
    """The statements of the seed ``script`` (read from ``path``, named in errors), in order.

    Raises ``SandboxError`` naming the file and line for a psql meta-command, text that is not
    UTF-8, or a null byte.
    """
    try:
        text = script.decode("utf-8")
    except UnicodeDecodeError as error:
        line = script[: error.start].count(b"\n") + 1
        raise SandboxError(f"seed {path}: line {line}: not UTF-8 ({error.reason})") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise SandboxError(f"seed {path}: line {line}: contains a null byte")
    text = RESTRICT_LINE.sub("", text.removeprefix("\ufeff"))
    return _Reader(text, path).read()

"""How ``--help`` is rendered: placeholders kept, and lists read from the registries at help time.

The help texts are Markdown (``rich_markup_mode="markdown"``), where ``<dataset>`` reads as an
HTML tag and disappears; every ``<`` outside a code span is escaped just before rendering, so
``runs/replay/<dataset>-*`` shows as written. An option whose help lists what is registered
(served kinds, judge modes, model providers, kinds' endpoints and settings) gets a function that
words it when help is asked for, so a kind, mode or provider registered after import (a plugin,
a test) is listed too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["HelpCommand", "HelpGroup", "install_help", "keep_placeholders", "live_help"]

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_UNESCAPED_ANGLE = re.compile(r"(?<!\\)<")


def keep_placeholders(text: str | None) -> str | None:
    """``text`` with every ``<`` outside code spans escaped for Markdown (idempotent)."""
    if not text:
        return text
    parts: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_UNESCAPED_ANGLE.sub(r"\\<", text[last : span.start()]))
        parts.append(span.group(0))
        last = span.end()
    parts.append(_UNESCAPED_ANGLE.sub(r"\\<", text[last:]))
    return "".join(parts)


class HelpCommand(TyperCommand):
    """A command whose help keeps its placeholders and fills in its ``live`` options' help
    (parameter name to a function wording it) when it is rendered."""

    live: ClassVar[Mapping[str, Callable[[], str]]] = {}

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Refresh the live texts, escape placeholders, then render as Typer does."""
        for param in self.params:
            produce = self.live.get(param.name or "")
            if produce is not None:
                param.help = produce()  # type: ignore[attr-defined]
            if hasattr(param, "help"):
                param.help = keep_placeholders(param.help)
        self.help = keep_placeholders(self.help)
        super().format_help(ctx, formatter)


class HelpGroup(TyperGroup):
    """A command group whose help (and its commands' one-line summaries) keeps placeholders."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Escape placeholders in the group's and its commands' help, then render."""
        self.help = keep_placeholders(self.help)
        for command in getattr(self, "commands", {}).values():
            command.help = keep_placeholders(command.help)
        super().format_help(ctx, formatter)


def live_help(**producers: Callable[[], str]) -> type[HelpCommand]:
    """A ``HelpCommand`` class whose options named in ``producers`` get their help from them."""
    return type(
        "LiveHelpCommand", (HelpCommand,), {"live": dict(producers), "__module__": __name__}
    )


def install_help(app: typer.Typer) -> None:
    """Render every command of ``app`` (and of its sub-apps) with ``HelpCommand``, unless it
    names a class of its own; sub-apps with ``HelpGroup``."""
    for command in app.registered_commands:
        if command.cls is None or command.cls is TyperCommand:  # Typer's default
            command.cls = HelpCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            install_help(group.typer_instance)
            group.typer_instance.info.cls = HelpGroup
        group.cls = HelpGroup

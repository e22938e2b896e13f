"""minimatch-compatible glob matching (``dot: true``)."""

from __future__ import annotations

from mcp_servers.filesystem.glob import glob_match


def test_glob_match_follows_minimatch_with_dot() -> None:
    assert glob_match("b.md", "*.md")
    assert not glob_match("a/b.md", "*.md")
    assert glob_match("a/b.md", "**/*.md")
    assert glob_match(".hidden", "*")
    assert glob_match("a.ts", "*.{js,ts}")
    assert glob_match("f2", "f{1..3}")
    assert not glob_match("abc", "a[!b]c")
    assert glob_match("abd", "!abc")
    assert not glob_match("a", "a/**")
    assert glob_match("x/node_modules/y", "**/node_modules/**")

"""jsdiff-compatible unified diffs: hunks, context and no-newline markers."""

from __future__ import annotations

from mcp_servers.filesystem.diff import unified_diff


def test_unified_diff_marks_missing_final_newlines_and_empty_hunks() -> None:
    patch = unified_diff("a\nb\nc", "a\nb\nc\nd", "/f")
    assert patch.endswith(
        "@@ -1,3 +1,4 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n+d\n"
        "\\ No newline at end of file\n"
    )
    assert unified_diff("", "new\n", "/f").endswith("@@ -0,0 +1,1 @@\n+new\n")
    assert unified_diff("same\n", "same\n", "/f").count("\n") == 4

"""The reference filesystem server's tools over a local tree: outputs, error texts, path rule."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from mcp_servers.filesystem import operations
from mcp_servers.filesystem.content import READ_LIMIT_BYTES
from mcp_servers.filesystem.formatting import js_date_string
from mcp_servers.filesystem.operations import FILESYSTEM_TOOLS, call_filesystem_tool
from mcp_servers.results import ToolArgumentError, ToolResult
from sandboxes.filesystem.local import LocalFileTree

MINI = Path(__file__).resolve().parents[3] / "datasets" / "examples" / "mini"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    (base / "docs" / "deep").mkdir(parents=True)
    (base / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    (base / "docs" / "a.md").write_text("# A\n")
    (base / "docs" / "deep" / "b.md").write_text("# B\n")
    (base / "image.png").write_bytes(b"\x89PNG fake")
    return base


@pytest.fixture
def tree(root: Path) -> LocalFileTree:
    return LocalFileTree(root)


async def call(tree: LocalFileTree, name: str, **arguments: Any) -> ToolResult:
    return await call_filesystem_tool(tree, name, arguments)


def _substitute(value: Any, root: str) -> Any:
    return json.loads(json.dumps(value).replace("${SANDBOX_ROOT}", root))


@pytest.mark.parametrize(
    "trajectory",
    sorted((MINI / "trajectories").glob("fs-meeting-notes-index--*.json")),
    ids=lambda path: path.stem,
)
async def test_recorded_calls_replay_to_the_recorded_outputs(
    tmp_path: Path, trajectory: Path
) -> None:
    copy = tmp_path / "sandbox"
    shutil.copytree(MINI / "tasks" / "fs-meeting-notes-index" / "initial", copy)
    tree = LocalFileTree(copy)
    for step in json.loads(trajectory.read_text())["steps"]:
        action = step["action"]
        result = await call_filesystem_tool(
            tree, action["name"], _substitute(action["arguments"], tree.root)
        )
        expected = step["observation"]["text"].replace("${SANDBOX_ROOT}", tree.root)
        assert result.text == expected, f"step {step['index']}"
        assert result.is_error == step["is_error"], f"step {step['index']}"


def test_the_table_has_the_fourteen_reference_tools_and_marks_writers() -> None:
    assert sorted(FILESYSTEM_TOOLS) == sorted(
        [
            "read_text_file",
            "read_file",
            "read_media_file",
            "read_multiple_files",
            "write_file",
            "edit_file",
            "create_directory",
            "list_directory",
            "list_directory_with_sizes",
            "directory_tree",
            "move_file",
            "search_files",
            "get_file_info",
            "list_allowed_directories",
        ]
    )
    writers = {name for name, spec in FILESYSTEM_TOOLS.items() if spec.writes}
    assert writers == {"write_file", "edit_file", "create_directory", "move_file"}
    schema = FILESYSTEM_TOOLS["edit_file"].arguments.model_json_schema()
    assert set(schema["properties"]) == {"path", "edits", "dryRun"}
    assert "first N lines" in str(
        FILESYSTEM_TOOLS["read_text_file"].arguments.model_json_schema()["properties"]["head"]
    )


async def test_read_text_file_whole_head_and_tail(tree: LocalFileTree) -> None:
    assert (await call(tree, "read_text_file", path="notes.txt")).text == "one\ntwo\nthree\nfour\n"
    assert (await call(tree, "read_text_file", path="notes.txt", head=2)).text == "one\ntwo"
    # The file ends with a newline, so its last "line" is empty: tail 2 is "four" and "".
    assert (await call(tree, "read_text_file", path="notes.txt", tail=2)).text == "four\n"
    assert (await call(tree, "read_text_file", path="notes.txt", tail=3)).text == "three\nfour\n"
    # head=0 is falsy in JavaScript: the whole file comes back.
    assert (await call(tree, "read_text_file", path="notes.txt", head=0)).text.count("\n") == 4
    both = await call(tree, "read_text_file", path="notes.txt", head=1, tail=1)
    assert both.is_error
    assert both.text == "Error: Cannot specify both head and tail parameters simultaneously"
    alias = await call(tree, "read_file", path=f"{tree.root}/notes.txt", head=1)
    assert alias.text == "one"


async def test_read_text_file_head_decodes_across_chunks(tree: LocalFileTree, root: Path) -> None:
    (root / "wide.txt").write_text("é" * 700 + "\nsecond\n")
    result = await call(tree, "read_text_file", path="wide.txt", head=1)
    assert result.text == "é" * 700


async def test_read_errors_use_node_messages_with_the_absolute_path(
    tree: LocalFileTree,
) -> None:
    missing = await call(tree, "read_text_file", path="docs/nope.md")
    assert missing.is_error
    assert (
        missing.text == f"Error: ENOENT: no such file or directory, open '{tree.root}/docs/nope.md'"
    )
    deeper = await call(tree, "read_text_file", path="nowhere/at/all.md")
    assert deeper.text == (
        f"Error: ENOENT: no such file or directory, open '{tree.root}/nowhere/at/all.md'"
    )
    tail = await call(tree, "read_text_file", path="nope.md", tail=1)
    assert tail.text == f"Error: ENOENT: no such file or directory, stat '{tree.root}/nope.md'"
    directory = await call(tree, "read_text_file", path="docs")
    assert directory.text == "Error: EISDIR: illegal operation on a directory, read"
    under_file = await call(tree, "read_text_file", path="notes.txt/x")
    assert under_file.text == (
        f"Error: ENOTDIR: not a directory, realpath '{tree.root}/notes.txt/x'"
    )


async def test_read_media_file_returns_base64_and_mime_type(tree: LocalFileTree) -> None:
    result = await call(tree, "read_media_file", path="image.png")
    assert result.text == ""
    assert not result.is_error
    [image] = result.images
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == b"\x89PNG fake"
    other = await call(tree, "read_media_file", path="notes.txt")
    assert other.images[0].mime_type == "application/octet-stream"


async def test_read_multiple_files_keeps_going_past_failures(tree: LocalFileTree) -> None:
    result = await call(tree, "read_multiple_files", paths=["docs/a.md", "gone.md", "/etc/passwd"])
    assert result.text == (
        "docs/a.md:\n# A\n\n"
        "\n---\n"
        f"gone.md: Error - ENOENT: no such file or directory, open '{tree.root}/gone.md'"
        "\n---\n"
        "/etc/passwd: Error - Access denied - path outside allowed directories: "
        f"/etc/passwd not in {tree.root}"
    )
    assert not result.is_error


async def test_write_file_creates_and_overwrites(tree: LocalFileTree, root: Path) -> None:
    created = await call(tree, "write_file", path="docs/new.md", content="hello ✓\n")
    assert created.text == "Successfully wrote to docs/new.md"
    assert (root / "docs" / "new.md").read_text() == "hello ✓\n"
    await call(tree, "write_file", path=f"{tree.root}/docs/new.md", content="again")
    assert (root / "docs" / "new.md").read_text() == "again"
    orphan = await call(tree, "write_file", path="missing/dir/x.txt", content="x")
    assert orphan.is_error
    assert orphan.text == (
        f"Error: ENOENT: no such file or directory, open '{tree.root}/missing/dir/x.txt'"
    )
    assert not (root / "missing").exists()


async def test_edit_file_returns_the_jsdiff_patch_and_writes(
    tree: LocalFileTree, root: Path
) -> None:
    result = await call(
        tree,
        "edit_file",
        path="notes.txt",
        edits=[{"oldText": "two", "newText": "TWO"}, {"oldText": "four\n", "newText": "4\n5\n"}],
    )
    path = f"{tree.root}/notes.txt"
    assert result.text == (
        "```diff\n"
        f"Index: {path}\n"
        "===================================================================\n"
        f"--- {path}\toriginal\n"
        f"+++ {path}\tmodified\n"
        "@@ -1,4 +1,5 @@\n"
        " one\n"
        "-two\n"
        "+TWO\n"
        " three\n"
        "-four\n"
        "+4\n"
        "+5\n"
        "```\n\n"
    )
    assert (root / "notes.txt").read_text() == "one\nTWO\nthree\n4\n5\n"


async def test_edit_file_dry_run_leaves_the_file_unchanged(tree: LocalFileTree, root: Path) -> None:
    before = (root / "notes.txt").read_bytes()
    result = await call(
        tree, "edit_file", path="notes.txt", edits=[{"oldText": "one", "newText": "1"}], dryRun=True
    )
    assert "-one\n+1\n" in result.text
    assert (root / "notes.txt").read_bytes() == before


async def test_edit_file_matches_lines_ignoring_whitespace_and_keeps_indentation(
    tree: LocalFileTree, root: Path
) -> None:
    (root / "code.py").write_text("def f():\n    x = 1\n    return x\n")
    await call(
        tree,
        "edit_file",
        path="code.py",
        edits=[{"oldText": "x = 1\nreturn x", "newText": "y = 2\nreturn y"}],
    )
    assert (root / "code.py").read_text() == "def f():\n    y = 2\nreturn y\n"


async def test_edit_file_without_a_match_fails_and_fences_grow_past_backticks(
    tree: LocalFileTree, root: Path
) -> None:
    failed = await call(
        tree, "edit_file", path="notes.txt", edits=[{"oldText": "zzz", "newText": ""}]
    )
    assert failed.is_error
    assert failed.text == "Error: Could not find exact match for edit:\nzzz"
    (root / "readme.md").write_text("```\ncode\n```\n")
    fenced = await call(
        tree, "edit_file", path="readme.md", edits=[{"oldText": "code", "newText": "more"}]
    )
    assert fenced.text.startswith("````diff\n")
    assert fenced.text.endswith("````\n\n")


async def test_create_directory_makes_parents_and_accepts_existing(
    tree: LocalFileTree, root: Path
) -> None:
    made = await call(tree, "create_directory", path="x/y/z")
    assert made.text == "Successfully created directory x/y/z"
    assert (root / "x" / "y" / "z").is_dir()
    again = await call(tree, "create_directory", path="x/y/z")
    assert not again.is_error
    clash = await call(tree, "create_directory", path="notes.txt")
    assert clash.text == f"Error: EEXIST: file already exists, mkdir '{tree.root}/notes.txt'"


async def test_list_directory_marks_files_and_directories(tree: LocalFileTree, root: Path) -> None:
    (root / "link").symlink_to(root / "docs")
    listing = await call(tree, "list_directory", path=tree.root)
    assert listing.text == "[DIR] docs\n[FILE] image.png\n[FILE] link\n[FILE] notes.txt"
    via_link = await call(tree, "list_directory", path="link")
    assert via_link.text == "[FILE] a.md\n[DIR] deep"
    not_dir = await call(tree, "list_directory", path="notes.txt")
    assert not_dir.text == f"Error: ENOTDIR: not a directory, scandir '{tree.root}/notes.txt'"
    missing = await call(tree, "list_directory", path="gone")
    assert missing.text == f"Error: ENOENT: no such file or directory, scandir '{tree.root}/gone'"


async def test_list_directory_with_sizes_formats_and_sorts(tree: LocalFileTree, root: Path) -> None:
    (root / "Big.bin").write_bytes(b"x" * 1536)
    by_name = await call(tree, "list_directory_with_sizes", path=".")
    assert by_name.text == "\n".join(
        [
            f"[FILE] {'Big.bin':<30} {'1.50 KB':>10}",
            f"[DIR] {'docs':<30} ",
            f"[FILE] {'image.png':<30} {'9 B':>10}",
            f"[FILE] {'notes.txt':<30} {'19 B':>10}",
            "",
            "Total: 3 files, 1 directories",
            "Combined size: 1.53 KB",
        ]
    )
    by_size = await call(tree, "list_directory_with_sizes", path=".", sortBy="size")
    first_lines = by_size.text.split("\n")[:2]
    assert first_lines[0].startswith("[DIR] docs")  # a directory's own size (4096) counts here
    assert first_lines[1].startswith("[FILE] Big.bin")


async def test_directory_tree_is_indented_json_with_excludes(tree: LocalFileTree) -> None:
    result = await call(tree, "directory_tree", path="docs")
    assert json.loads(result.text) == [
        {"name": "a.md", "type": "file"},
        {"name": "deep", "type": "directory", "children": [{"name": "b.md", "type": "file"}]},
    ]
    assert result.text.startswith('[\n  {\n    "name": "a.md",')
    bare = await call(tree, "directory_tree", path=tree.root, excludePatterns=["deep", "*.png"])
    names = json.dumps(json.loads(bare.text))
    assert "deep" not in names
    assert "image.png" not in names
    assert "notes.txt" in names


async def test_move_file_moves_and_refuses_an_existing_destination(
    tree: LocalFileTree, root: Path
) -> None:
    moved = await call(tree, "move_file", source="docs/a.md", destination="docs/deep/a.md")
    assert moved.text == "Successfully moved docs/a.md to docs/deep/a.md"
    assert (root / "docs" / "deep" / "a.md").read_text() == "# A\n"
    assert not (root / "docs" / "a.md").exists()
    refused = await call(tree, "move_file", source="notes.txt", destination="docs/deep/b.md")
    assert refused.is_error
    assert refused.text == f"Error: Destination already exists: {tree.root}/docs/deep/b.md"
    assert (root / "notes.txt").exists()
    assert (root / "docs" / "deep" / "b.md").read_text() == "# B\n"
    missing = await call(tree, "move_file", source="gone", destination="here")
    assert missing.text == (
        f"Error: ENOENT: no such file or directory, rename '{tree.root}/gone' -> '{tree.root}/here'"
    )


async def test_search_files_matches_globs_relative_to_the_search_root(
    tree: LocalFileTree,
) -> None:
    top = await call(tree, "search_files", path="docs", pattern="*.md")
    assert top.text == f"{tree.root}/docs/a.md"
    anywhere = await call(tree, "search_files", path=tree.root, pattern="**/*.md")
    assert anywhere.text == f"{tree.root}/docs/a.md\n{tree.root}/docs/deep/b.md"
    excluded = await call(
        tree, "search_files", path=tree.root, pattern="**/*.md", excludePatterns=["docs/deep"]
    )
    assert excluded.text == f"{tree.root}/docs/a.md"
    nothing = await call(tree, "search_files", path=tree.root, pattern="*.zip")
    assert nothing.text == "No matches found"


async def test_get_file_info_reports_stat_fields(tree: LocalFileTree, root: Path) -> None:
    os.chmod(root / "notes.txt", 0o640)
    os.utime(root / "notes.txt", (0, 1709550000))
    info = dict(
        line.split(": ", 1)
        for line in (await call(tree, "get_file_info", path="notes.txt")).text.split("\n")
    )
    assert list(info) == [
        "size",
        "created",
        "modified",
        "accessed",
        "isDirectory",
        "isFile",
        "permissions",
    ]
    assert info["size"] == "19"
    assert info["modified"] == js_date_string(1709550000)
    assert info["isFile"] == "true"
    assert info["isDirectory"] == "false"
    assert info["permissions"] == "640"
    assert (await call(tree, "get_file_info", path=".")).text.split("\n")[4] == "isDirectory: true"


async def test_list_allowed_directories_names_the_root(tree: LocalFileTree) -> None:
    assert (await call(tree, "list_allowed_directories")).text == (
        f"Allowed directories:\n{tree.root}"
    )


async def test_path_rule_refuses_escapes(tree: LocalFileTree, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "escape.txt").symlink_to(outside / "secret.txt")
    (root / "away").symlink_to(outside)
    traversal = await call(tree, "read_text_file", path="docs/../../outside/secret.txt")
    assert traversal.is_error
    assert traversal.text == (
        "Error: Access denied - path outside allowed directories: "
        f"{outside}/secret.txt not in {tree.root}"
    )
    absolute = await call(tree, "read_text_file", path=str(outside / "secret.txt"))
    assert absolute.text.startswith("Error: Access denied - path outside allowed directories")
    link = await call(tree, "read_text_file", path="escape.txt")
    assert link.text == (
        "Error: Access denied - symlink target outside allowed directories: "
        f"{outside}/secret.txt not in {tree.root}"
    )
    new_under_link = await call(tree, "write_file", path="away/new.txt", content="x")
    assert new_under_link.text == (
        "Error: Access denied - parent directory outside allowed directories: "
        f"{outside} not in {tree.root}"
    )
    assert not (outside / "new.txt").exists()
    null_byte = await call(tree, "read_text_file", path="notes\x00.txt")
    assert null_byte.text.startswith("Error: Access denied - path outside allowed directories")
    home = await call(tree, "list_directory", path="~")
    assert home.text.startswith("Error: Access denied - path outside allowed directories")
    windows = await call(tree, "list_directory", path="C:\\Users")
    assert windows.text == (
        "Error: Access denied - Windows-style path received on a POSIX host: C:\\Users"
    )
    sibling = await call(tree, "list_directory", path=f"{tree.root}-other")
    assert sibling.text.startswith("Error: Access denied - path outside allowed directories")


async def test_symlinks_inside_the_tree_are_followed(tree: LocalFileTree, root: Path) -> None:
    (root / "alias.txt").symlink_to(root / "notes.txt")
    assert (await call(tree, "read_text_file", path="alias.txt", head=1)).text == "one"
    (root / "dangling").symlink_to(root / "nothing-here")
    broken = await call(tree, "read_text_file", path="dangling")
    assert broken.text == f"Error: Parent directory does not exist: {tree.root}"


async def test_read_only_trees_refuse_writes_with_an_error_result(root: Path) -> None:
    tree = LocalFileTree(root, read_only=True)
    refused = await call(tree, "write_file", path="notes.txt", content="x")
    assert refused.is_error
    assert refused.text == f"Error: EROFS: read-only file system, open '{tree.root}/notes.txt'"
    assert (root / "notes.txt").read_text().startswith("one")
    mkdir = await call(tree, "create_directory", path="fresh")
    assert mkdir.text == f"Error: EROFS: read-only file system, mkdir '{tree.root}/fresh'"
    assert not (await call(tree, "create_directory", path="docs")).is_error
    move = await call(tree, "move_file", source="notes.txt", destination="moved.txt")
    assert move.text.startswith("Error: EROFS: read-only file system, rename ")
    dry = await call(
        tree, "edit_file", path="notes.txt", edits=[{"oldText": "one", "newText": "1"}], dryRun=True
    )
    assert not dry.is_error


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("read_text_file", {}, "path"),
        ("read_text_file", {"path": 5}, "path"),
        ("read_text_file", {"path": "a", "head": None}, "head"),
        ("read_text_file", {"path": "a", "head": "3"}, "head"),
        ("read_multiple_files", {"paths": []}, "paths"),
        ("edit_file", {"path": "a", "edits": [{"oldText": "x"}]}, "edits.0.newText"),
        ("list_directory_with_sizes", {"path": "a", "sortBy": "date"}, "sortBy"),
        ("move_file", {"source": "a"}, "destination"),
    ],
)
async def test_bad_arguments_raise_with_the_tool_and_field_named(
    tree: LocalFileTree, name: str, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        await call_filesystem_tool(tree, name, arguments)
    assert caught.value.tool == name
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{name}: {field}:")


async def test_unknown_tools_and_ignored_extra_arguments(tree: LocalFileTree) -> None:
    with pytest.raises(ToolArgumentError, match="unknown tool 'delete_file'"):
        await call_filesystem_tool(tree, "delete_file", {"path": "a"})
    extra = await call_filesystem_tool(tree, "list_directory", {"path": "docs", "verbose": True})
    assert extra.text == "[FILE] a.md\n[DIR] deep"


# ---------------------------------------------------------------------------------------------
# Bounded reads: what this server does where the reference would spin, hang or fill memory
# ---------------------------------------------------------------------------------------------

LIMIT = READ_LIMIT_BYTES


def bytes_read_by_this_process() -> int:
    """``rchar`` of ``/proc/self/io``: every byte this process's read calls returned."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


async def test_a_whole_file_past_the_read_limit_is_cut_with_a_note(
    tree: LocalFileTree, root: Path
) -> None:
    data = b"0123456789\n" * (LIMIT // 11 + 1000)
    (root / "big.txt").write_bytes(data)
    result = await call(tree, "read_text_file", path="big.txt")
    assert not result.is_error
    text, note = result.text.split("\n\n[cut: ", 1)
    assert text == data[:LIMIT].decode()
    assert note == (
        f"{tree.root}/big.txt holds {len(data)} bytes, past the read limit of {LIMIT}; shown: its"
        f" first {LIMIT} bytes. Use head or tail to read its first or last lines]"
    )


async def test_head_and_tail_read_only_the_end_they_need(tree: LocalFileTree, root: Path) -> None:
    lines = 2_000_000
    (root / "log.txt").write_bytes(b"".join(b"line %d\n" % number for number in range(lines)))
    before = bytes_read_by_this_process()
    head = await call(tree, "read_text_file", path="log.txt", head=3)
    read = bytes_read_by_this_process() - before
    assert head.text == "line 0\nline 1\nline 2"
    assert read <= 128 * 1024, read  # one step of the forward read, not 20 MB
    before = bytes_read_by_this_process()
    tail = await call(tree, "read_text_file", path="log.txt", tail=3)
    read = bytes_read_by_this_process() - before
    assert tail.text == f"line {lines - 2}\nline {lines - 1}\n"
    assert read <= 128 * 1024, read


async def test_head_and_tail_past_the_limit_show_what_fits_and_say_so(
    tree: LocalFileTree, root: Path
) -> None:
    (root / "one-line.txt").write_bytes(b"a" * (LIMIT + 10) + b"\nlast\n")
    head = await call(tree, "read_text_file", path="one-line.txt", head=2)
    assert head.text == "a" * LIMIT + (
        f"\n\n[cut: the first 2 lines of {tree.root}/one-line.txt run past the read limit of"
        f" {LIMIT} bytes; shown: its first {LIMIT} of {LIMIT + 16} bytes]"
    )
    tail = await call(tree, "read_text_file", path="one-line.txt", tail=3)
    assert (
        tail.text
        == (
            f"[cut: the last 3 lines of {tree.root}/one-line.txt run past the read limit of"
            f" {LIMIT} bytes; shown: its last {LIMIT} of {LIMIT + 16} bytes]\n\n"
        )
        + "a" * (LIMIT - 6)
        + "\nlast\n"
    )
    # Lines that fit are answered exactly as the reference would, however long the file.
    assert (await call(tree, "read_text_file", path="one-line.txt", tail=2)).text == "last\n"


async def test_read_multiple_files_share_one_read_limit(tree: LocalFileTree, root: Path) -> None:
    third = LIMIT * 3 // 4
    for name in ("a", "b", "c"):
        (root / f"{name}.txt").write_bytes(name.encode() * third)
    result = await call(tree, "read_multiple_files", paths=["a.txt", "b.txt", "notes.txt", "c.txt"])
    a, b, notes, c = result.text.split("\n---\n")
    assert a == "a.txt:\n" + "a" * third + "\n"
    assert b == "b.txt:\n" + "b" * (LIMIT - third) + (
        f"\n\n[cut: {tree.root}/b.txt holds {third} bytes; shown: its first {LIMIT - third},"
        f" all the files of one call sharing a read limit of {LIMIT} bytes]\n"
    )
    for skipped, name in ((notes, "notes.txt"), (c, "c.txt")):
        assert skipped == (
            f"{name}: Error - not read: this answer already holds {LIMIT} bytes of file content,"
            " the read limit of one call; read it on its own"
        )


async def test_media_and_edits_past_the_limit_are_refused_unread(
    tree: LocalFileTree, root: Path
) -> None:
    (root / "huge.png").write_bytes(b"\x89PNG" + b"\0" * LIMIT)
    media = await call(tree, "read_media_file", path="huge.png")
    assert media.is_error
    assert media.images == []
    assert media.text == (
        f"Error: {tree.root}/huge.png holds more than the read limit of {LIMIT} bytes: not read"
    )
    (root / "huge.txt").write_bytes(b"x\n" * (LIMIT // 2 + 1))
    edit = await call(tree, "edit_file", path="huge.txt", edits=[{"oldText": "x", "newText": "y"}])
    assert edit.text == (
        f"Error: {tree.root}/huge.txt holds {LIMIT + 2} bytes, more than edit_file reads"
        f" ({LIMIT}): not edited"
    )
    assert (root / "huge.txt").read_bytes()[:2] == b"x\n"


async def test_the_diff_fence_outgrows_the_longest_backtick_run(
    tree: LocalFileTree, root: Path
) -> None:
    (root / "ticks.md").write_text("`" * 7 + "\nkeep\n")
    result = await call(
        tree, "edit_file", path="ticks.md", edits=[{"oldText": "keep", "newText": "kept"}]
    )
    assert result.text.startswith("`" * 8 + "diff\n")
    assert result.text.endswith("\n" + "`" * 8 + "\n\n")


async def test_a_fifo_is_refused_without_waiting_for_a_writer(
    tree: LocalFileTree, root: Path
) -> None:
    os.mkfifo(root / "pipe")
    for arguments in ({}, {"head": 1}, {"tail": 1}):
        result = await asyncio.wait_for(
            call(tree, "read_text_file", path="pipe", **arguments), timeout=10
        )
        assert (
            result.text == f"Error: Cannot read {tree.root}/pipe: it is a fifo, not a regular file"
        )
    media = await asyncio.wait_for(call(tree, "read_media_file", path="pipe"), timeout=10)
    assert "it is a fifo" in media.text


async def test_listings_stop_at_the_limit_with_a_note(
    tree: LocalFileTree, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "many").mkdir()
    for number in range(60):
        (root / "many" / f"file-{number:02d}.txt").write_text("x")
    monkeypatch.setattr(operations, "READ_LIMIT_BYTES", 400)
    listed = (await call(tree, "list_directory", path="many")).text
    shown, note = listed.split("\n\n[cut: ")
    assert shown.splitlines() == [f"[FILE] file-{number:02d}.txt" for number in range(21)]
    assert note == "21 of 60 entries shown; a listing stops at 400 characters]"
    sized = (await call(tree, "list_directory_with_sizes", path="many")).text
    assert "[cut: " in sized
    assert sized.endswith("Total: 60 files, 0 directories\nCombined size: 60 B")
    found = (await call(tree, "search_files", path="many", pattern="*.txt")).text
    assert found.count(f"{tree.root}/many/") < 60
    assert "[cut: " in found
    described = (await call(tree, "directory_tree", path="many")).text
    body, _, note = described.partition("\n\n[cut: ")
    assert 0 < len(json.loads(body)) < 60
    assert note.endswith("List the directories left out on their own]")

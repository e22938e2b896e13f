"""The filesystem MCP server, driven through real MCP client sessions on every backend.

Each tool is called through ``mcp.Client`` (in-memory, and over stdio for the standalone entry
point) and its answer is checked against what the sandbox's tree really holds afterwards.
"""

from __future__ import annotations

import base64
import json
import posixpath
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types

from dataset.models import DirectoryTreeState, Task
from mcp_servers.filesystem.operations import FILESYSTEM_TOOLS
from mcp_servers.filesystem.server import filesystem_server
from sandboxes.filesystem.sandbox import FilesystemProvider, FilesystemSandbox
from sandboxes.filesystem.tree import FileTree
from tests.sandboxes.filesystem.helpers import BACKENDS, filesystem_provider

WRITERS = {"write_file", "edit_file", "create_directory", "move_file"}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def make_task() -> Task:
    return Task(
        id="fs-server",
        domain="ds",
        subdomain="filesystem",
        instruction="Serve me.",
        initial_state=DirectoryTreeState(kind="directory_tree", path="initial"),
    )


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    tree = tmp_path / "task" / "initial"
    (tree / "docs" / "deep").mkdir(parents=True)
    (tree / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    (tree / "docs" / "a.md").write_text("# A\nalpha\n")
    (tree / "docs" / "deep" / "b.md").write_text("# B\n")
    (tree / "docs" / "c.txt").write_text("see\n")
    (tree / "pixel.png").write_bytes(PNG)
    return tmp_path / "task"


@pytest.fixture(params=BACKENDS)
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[FilesystemProvider]:
    async with filesystem_provider(request.param) as made:
        yield made


@pytest.fixture
async def clone(provider: FilesystemProvider, task_dir: Path) -> AsyncIterator[FilesystemSandbox]:
    """A writable clone of a frozen tree, as a judge that may write would get."""
    snapshot = await (await provider.create(make_task(), task_dir)).freeze()
    async with snapshot:
        sandbox = await snapshot.clone(writable=True)
        assert isinstance(sandbox, FilesystemSandbox)
        async with sandbox:
            yield sandbox


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def call(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    return text_of(result)


async def read(tree: FileTree, path: str) -> str:
    return (await tree.read_bytes(path)).decode()


async def test_lists_the_fourteen_tools_with_public_parameters_and_annotations(
    clone: FilesystemSandbox,
) -> None:
    async with Client(filesystem_server(clone.tree).server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(FILESYSTEM_TOOLS)
    assert set(tools["edit_file"].input_schema["properties"]) == {"path", "edits", "dryRun"}
    edit_items = tools["edit_file"].input_schema["$defs"]["EditOperation"]["properties"]
    assert set(edit_items) == {"oldText", "newText"}
    assert set(tools["directory_tree"].input_schema["properties"]) == {"path", "excludePatterns"}
    assert tools["list_directory_with_sizes"].input_schema["properties"]["sortBy"]["enum"] == [
        "name",
        "size",
    ]
    for name, tool in tools.items():
        annotations = tool.annotations
        assert annotations is not None
        assert annotations.read_only_hint is (name not in WRITERS), name
        assert annotations.open_world_hint is False
        assert len(tool.description or "") > 40, name
    assert tools["write_file"].annotations
    assert tools["write_file"].annotations.destructive_hint
    assert tools["create_directory"].annotations
    assert tools["create_directory"].annotations.destructive_hint is False


async def test_reading_tools_return_the_trees_content(clone: FilesystemSandbox) -> None:
    tree = clone.tree
    async with Client(filesystem_server(tree).server()) as client:
        notes = await read(tree, "notes.txt")
        assert await call(client, "read_text_file", path="notes.txt") == notes
        assert await call(client, "read_file", path=f"{tree.root}/notes.txt") == notes
        assert await call(client, "read_text_file", path="notes.txt", head=2) == "one\ntwo"
        assert await call(client, "read_text_file", path="notes.txt", tail=3) == "three\nfour\n"

        media = await client.call_tool("read_media_file", {"path": "pixel.png"})
        images = [block for block in media.content if isinstance(block, types.ImageContent)]
        assert not media.is_error
        assert len(images) == 1
        assert images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data) == await tree.read_bytes("pixel.png")

        both = await call(client, "read_multiple_files", paths=["docs/a.md", "docs/c.txt"])
        assert await read(tree, "docs/a.md") in both
        assert await read(tree, "docs/c.txt") in both

        listing = await call(client, "list_directory", path="docs")
        entries = await tree.list_directory("docs")
        assert listing.splitlines() == [
            f"{'[DIR]' if entry.kind == 'directory' else '[FILE]'} {entry.name}"
            for entry in entries
        ]

        sized = await call(client, "list_directory_with_sizes", path="docs", sortBy="size")
        files = [entry for entry in entries if entry.kind == "file"]
        assert f"Total: {len(files)} files, 1 directories" in sized
        biggest = max(files, key=lambda entry: entry.size)
        file_lines = [line for line in sized.splitlines() if line.startswith("[FILE]")]
        assert file_lines[0].startswith(f"[FILE] {biggest.name} ")

        everything = await tree.walk()

        def nested(prefix: str) -> list[dict[str, Any]]:
            below = [e for e in everything if posixpath.dirname(e.path) == prefix]
            return [
                {"name": e.name, "type": "directory", "children": nested(e.path)}
                if e.kind == "directory"
                else {"name": e.name, "type": "file"}
                for e in below
            ]

        assert json.loads(await call(client, "directory_tree", path=".")) == nested("")

        found = await call(client, "search_files", path=tree.root, pattern="**/*.md")
        expected = sorted(
            f"{tree.root}/{entry.path}" for entry in everything if entry.path.endswith(".md")
        )
        assert sorted(found.splitlines()) == expected

        info = await call(client, "get_file_info", path="docs/a.md")
        assert f"size: {(await tree.stat('docs/a.md')).size}" in info
        assert "isFile: true" in info

        allowed = await call(client, "list_allowed_directories")
        assert allowed.splitlines()[1:] == [tree.root]


async def test_writing_tools_change_the_clone(clone: FilesystemSandbox) -> None:
    tree = clone.tree
    async with Client(filesystem_server(tree).server()) as client:
        await call(client, "write_file", path="docs/new.txt", content="fresh ✓\n")
        assert await read(tree, "docs/new.txt") == "fresh ✓\n"

        preview = await call(
            client,
            "edit_file",
            path="docs/a.md",
            edits=[{"oldText": "alpha", "newText": "omega"}],
            dryRun=True,
        )
        assert "-alpha" in preview
        assert "+omega" in preview
        assert await read(tree, "docs/a.md") == "# A\nalpha\n"
        await call(
            client, "edit_file", path="docs/a.md", edits=[{"oldText": "alpha", "newText": "omega"}]
        )
        assert await read(tree, "docs/a.md") == "# A\nomega\n"

        await call(client, "create_directory", path="made/inner")
        assert (await tree.stat("made/inner")).kind == "directory"

        await call(client, "move_file", source="docs/c.txt", destination="made/c.txt")
        assert await read(tree, "made/c.txt") == "see\n"
        with pytest.raises(FileNotFoundError):
            await tree.stat("docs/c.txt")

        refused = await client.call_tool(
            "move_file", {"source": "notes.txt", "destination": "made/c.txt"}
        )
        assert refused.is_error
        assert "Destination already exists" in text_of(refused)
        assert await read(tree, "notes.txt") == "one\ntwo\nthree\nfour\n"


async def test_read_only_server_has_no_writing_tools_and_cannot_write(
    clone: FilesystemSandbox,
) -> None:
    tree = clone.tree
    async with Client(filesystem_server(tree, read_only=True).server()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == set(FILESYSTEM_TOOLS) - WRITERS
        refused = await client.call_tool("write_file", {"path": "x.txt", "content": "no"})
        assert refused.is_error
        assert "unknown tool 'write_file'" in text_of(refused)
    with pytest.raises(FileNotFoundError):
        await tree.stat("x.txt")


async def test_a_read_only_view_serves_only_reading_tools(
    provider: FilesystemProvider, task_dir: Path
) -> None:
    snapshot = await (await provider.create(make_task(), task_dir)).freeze()
    async with snapshot:
        view = await snapshot.clone(writable=False)
        assert isinstance(view, FilesystemSandbox)
        async with Client(filesystem_server(view.tree).server()) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert not names & WRITERS
            assert await call(client, "read_text_file", path="docs/deep/b.md") == "# B\n"


async def test_bad_arguments_come_back_as_errors_naming_the_parameter(
    clone: FilesystemSandbox,
) -> None:
    async with Client(filesystem_server(clone.tree).server()) as client:
        missing = await client.call_tool("read_text_file", {})
        assert missing.is_error
        assert "path" in text_of(missing)
        typed = await client.call_tool("read_multiple_files", {"paths": "notes.txt"})
        assert typed.is_error
        assert "paths" in text_of(typed)
        absent = await client.call_tool("read_text_file", {"path": "nope.txt"})
        assert absent.is_error
        assert "ENOENT" in text_of(absent)
        # the session survives every failure
        assert await call(client, "read_text_file", path="notes.txt", head=1) == "one"


async def test_standalone_server_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    (root / "hello.txt").write_text("hello over stdio\n")
    writable = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_servers.filesystem", "--root", str(root)]
    )
    async with Client(writable) as client:
        assert await call(client, "read_text_file", path="hello.txt") == "hello over stdio\n"
        await call(client, "write_file", path="sub.txt", content="written")
        outside = await client.call_tool("read_text_file", {"path": "../../etc/passwd"})
        assert outside.is_error
        assert "Access denied" in text_of(outside)
    assert (root / "sub.txt").read_text() == "written"

    read_only = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.filesystem", "--root", str(root), "--read-only"],
    )
    async with Client(read_only) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == set(FILESYSTEM_TOOLS) - WRITERS
        refused = await client.call_tool("write_file", {"path": "hello.txt", "content": "x"})
        assert refused.is_error
    assert (root / "hello.txt").read_text() == "hello over stdio\n"


@pytest.mark.docker
async def test_standalone_server_over_stdio_on_a_container(tmp_path: Path) -> None:
    from dataset.models import EmptyState
    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.filesystem.docker import DockerFilesystemProvider

    ensure_sandbox_image()
    task = Task(
        id="fs-stdio",
        domain="ds",
        subdomain="filesystem",
        instruction="i",
        initial_state=EmptyState(),
    )
    async with DockerFilesystemProvider(pool_size=0) as provider:
        sandbox = await provider.create(task, tmp_path)
        await sandbox.tree.write_bytes("hello.txt", b"hello in a container\n")
        served = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcp_servers.filesystem", "--container", sandbox.name],
        )
        async with Client(served) as client:
            assert (
                await call(client, "read_text_file", path="hello.txt") == "hello in a container\n"
            )
            await call(client, "write_file", path="/sandbox/sub.txt", content="written")
            outside = await client.call_tool("read_text_file", {"path": "/etc/passwd"})
            assert outside.is_error
            assert "Access denied" in text_of(outside)
        assert await sandbox.tree.read_bytes("sub.txt") == b"written"
    missing = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.filesystem", "--container", "aj_no_such_container"],
    )
    done = subprocess.run(
        [missing.command, *missing.args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0
    assert "--container aj_no_such_container" in done.stderr

"""The workspace servers through a real MCP client: which tools each audience gets, what they
answer, and every attempt to leave the project folder or change a read-only one refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client, types

from mcp_servers.workspace.server import workspace_agent_server, workspace_judge_server
from sandboxes.filesystem.local import LocalFileTree


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("def main():\n    return 'hello'\n")
    (folder / "README.md").write_text("# app\nsee src/app.py\n")
    (tmp_path / "outside.txt").write_text("host secret\n")
    os.symlink(tmp_path / "outside.txt", folder / "link.txt")
    os.symlink(tmp_path, folder / "up")
    tmp_path.chmod(0o755)
    return folder


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_tools_per_audience(project: Path) -> None:
    agent = workspace_agent_server(LocalFileTree(project))
    reader = workspace_judge_server(LocalFileTree(project, read_only=True), writable=False)
    writer = workspace_judge_server(LocalFileTree(project), writable=True)
    assert set(agent.tools) == {"run_command", "read_file", "write_file", "edit_file"}
    assert set(reader.tools) == {"run_command", "read_file", "list_files", "search_files"}
    assert set(writer.tools) == set(reader.tools) | {"write_file", "edit_file"}


async def test_agent_tools_edit_and_run(project: Path) -> None:
    async with Client(workspace_agent_server(LocalFileTree(project)).server()) as client:
        read = await client.call_tool("read_file", {"path": "src/app.py"})
        assert _text(read) == "     1\tdef main():\n     2\t    return 'hello'"
        edited = await client.call_tool(
            "edit_file", {"path": "src/app.py", "old_string": "'hello'", "new_string": "'hi'"}
        )
        assert not edited.is_error
        again = await client.call_tool(
            "edit_file", {"path": "src/app.py", "old_string": "'hello'", "new_string": "'x'"}
        )
        assert again.is_error
        assert "not found" in _text(again)
        wrote = await client.call_tool("write_file", {"path": "docs/new.md", "content": "x\n"})
        assert _text(wrote) == "Created docs/new.md (2 bytes)"
        run = await client.call_tool(
            "run_command",
            {
                "command": 'python -c \'import sys; sys.path.insert(0, "src"); '
                "import app; print(app.main())' && touch made.txt"
            },
        )
        assert _text(run) == "hi\n[exit code 0]"
    assert (project / "made.txt").exists()
    assert (project / "docs" / "new.md").read_text() == "x\n"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "../outside.txt"}),
        ("read_file", {"path": "/etc/passwd"}),
        ("read_file", {"path": "link.txt"}),
        ("read_file", {"path": "up/outside.txt"}),
        ("read_file", {"path": "src/../../outside.txt"}),
        ("read_file", {"path": "src/app.py\x00"}),
        ("list_files", {"path": ".."}),
        ("list_files", {"path": "up"}),
        ("search_files", {"pattern": "secret", "path": "up"}),
        ("search_files", {"pattern": "secret", "path": "../"}),
        ("write_file", {"path": "../planted.txt", "content": "x"}),
        ("write_file", {"path": "up/planted.txt", "content": "x"}),
        ("edit_file", {"path": "link.txt", "old_string": "host", "new_string": "x"}),
    ],
)
async def test_paths_outside_the_project_are_refused(
    project: Path, tool: str, arguments: dict[str, str]
) -> None:
    server = workspace_judge_server(LocalFileTree(project), writable=True)
    async with Client(server.server()) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error, _text(result)
    assert "host secret" not in _text(result)
    assert not (project.parent / "planted.txt").exists()
    assert (project.parent / "outside.txt").read_text() == "host secret\n"


async def test_search_answers_inside_the_project_only(project: Path) -> None:
    server = workspace_judge_server(LocalFileTree(project, read_only=True), writable=False)
    async with Client(server.server()) as client:
        found = await client.call_tool("search_files", {"pattern": "hello|app\\.py"})
        listed = await client.call_tool("list_files", {})
    assert _text(found) == "README.md:2:see src/app.py\nsrc/app.py:2:    return 'hello'"
    assert "src/app.py" in _text(listed).splitlines()
    assert "up (symlink)" in _text(listed).splitlines()


async def test_a_read_only_judge_changes_nothing(project: Path) -> None:
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    server = workspace_judge_server(LocalFileTree(project, read_only=True), writable=False)
    async with Client(server.server()) as client:
        run = await client.call_tool(
            "run_command", {"command": "rm -rf src && echo gone > README.md && ls"}
        )
        assert not run.is_error
        refused = await client.call_tool("write_file", {"path": "x.txt", "content": "x"})
        assert refused.is_error  # no such tool on a read-only judge
        timed = await client.call_tool("run_command", {"command": "sleep 20", "timeout": 1})
        assert timed.is_error
        assert _text(timed) == "[command timed out]"
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*")) == before
    assert (project / "README.md").read_text() == "# app\nsee src/app.py\n"

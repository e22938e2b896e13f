"""Escape attempts against the filesystem MCP server, on the local and the Docker backend.

Every attempt goes through a real MCP client session. Each must come back as an error result (or,
for ``read_multiple_files``, with an error in place of the file) that says why, must not show the
secret planted outside the tree, and must leave the tree and everything around it exactly as it
was: the fingerprints of the sandbox, the outside directory and a sibling directory whose name
starts with the sandbox root's are compared before and after.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, types

from dataset.models import DirectoryTreeState, Task
from mcp_servers.filesystem.server import filesystem_server
from sandboxes.filesystem.tree import FileTree

SECRET = "TOP-SECRET-4f1c"
LONG_NAME = "n" * 300


@dataclass
class Bed:
    """A served tree with escape routes planted in it, and a way to fingerprint the surroundings."""

    tree: FileTree
    outside: str
    """Absolute path of a directory next to the tree holding ``secret.txt``."""
    fingerprint: Callable[[], str]


def _host_fingerprint(*roots: Path) -> str:
    lines: list[str] = []
    for root in roots:
        for directory, names, files in os.walk(root):
            names.sort()
            for name in sorted([*names, *files]):
                path = os.path.join(directory, name)
                info = os.lstat(path)
                line = f"{path}|{info.st_mode:o}|{info.st_size}|{info.st_mtime_ns}|{info.st_nlink}"
                if os.path.islink(path):
                    line += "|" + os.readlink(path)
                elif os.path.isfile(path):
                    line += "|" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
                lines.append(line)
    return "\n".join(lines)


def _plant_host(root: Path, outside: Path, evil: Path) -> None:
    (root / "docs").mkdir(parents=True)
    (root / "notes.txt").write_text("inside\n")
    (root / "docs" / "a.md").write_text("# a\n")
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    evil.mkdir()
    (evil / "secret.txt").write_text(SECRET + "\n")
    (root / "link-out").symlink_to(outside)
    (root / "secret-link").symlink_to(outside / "secret.txt")
    (root / "dangling-out").symlink_to(outside / "planted.txt")
    (root / "up-link").symlink_to("..")
    (root / "chain-b").symlink_to("link-out/secret.txt")
    (root / "chain-a").symlink_to("chain-b")
    (root / "docs" / "rel-out").symlink_to("../../outside")
    os.link(outside / "secret.txt", root / "leak")


_PLANT_SCRIPT = f"""
set -e
mkdir -p /sandbox/docs /outside /sandbox-evil
printf 'inside\\n' > /sandbox/notes.txt
printf '# a\\n' > /sandbox/docs/a.md
printf '{SECRET}\\n' > /outside/secret.txt
printf '{SECRET}\\n' > /sandbox-evil/secret.txt
ln -s /outside /sandbox/link-out
ln -s /outside/secret.txt /sandbox/secret-link
ln -s /outside/planted.txt /sandbox/dangling-out
ln -s .. /sandbox/up-link
ln -s link-out/secret.txt /sandbox/chain-b
ln -s chain-b /sandbox/chain-a
ln -s ../../outside /sandbox/docs/rel-out
ln /outside/secret.txt /sandbox/leak
"""

_DOCKER_FINGERPRINT = (
    "find /sandbox /outside /sandbox-evil -printf '%p|%m|%s|%T@|%n|%l\\n' | sort;"
    " find /sandbox /outside /sandbox-evil -type f -exec sha256sum {} + | sort"
)


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
async def bed(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Bed]:
    if request.param == "local":
        from sandboxes.filesystem.local import LocalFileTree

        root, outside, evil = tmp_path / "root", tmp_path / "outside", tmp_path / "root-evil"
        _plant_host(root, outside, evil)
        yield Bed(LocalFileTree(root), str(outside), lambda: _host_fingerprint(root, outside, evil))
        return
    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.filesystem.docker import DockerFilesystemProvider, DockerFilesystemSandbox

    ensure_sandbox_image()
    (tmp_path / "task" / "initial").mkdir(parents=True)
    task = Task(
        id="fs-security",
        domain="ds",
        subdomain="filesystem",
        instruction="Stay inside.",
        initial_state=DirectoryTreeState(kind="directory_tree", path="initial"),
    )
    # The tree in the container's root filesystem, where the planted hard link to /outside can
    # be made (on the default tmpfs no file outside the tree shares its filesystem at all).
    async with DockerFilesystemProvider(tree_tmpfs=False) as provider:
        sandbox = await provider.create(task, tmp_path / "task")
        assert isinstance(sandbox, DockerFilesystemSandbox)
        async with sandbox:
            container = sandbox.tree.container
            planted = container.exec_run(["sh", "-c", _PLANT_SCRIPT])
            assert planted.exit_code == 0, planted.output

            def fingerprint() -> str:
                # The listing always names /sandbox: an empty answer is the engine dropping an
                # exec's output under load (seen in CI), so ask again rather than compare it.
                output = b""
                for _ in range(3):
                    result = container.exec_run(["sh", "-c", _DOCKER_FINGERPRINT])
                    assert result.exit_code == 0, result.output
                    assert isinstance(result.output, bytes)
                    output = result.output
                    if output:
                        break
                return output.decode()

            yield Bed(sandbox.tree, "/outside", fingerprint)


@dataclass(frozen=True)
class Attempt:
    tool: str
    arguments: dict[str, Any]
    expected: str | tuple[str, ...]
    """A fragment the error text must contain (or fragments, one of which it must contain:
    where the backends word the same refusal differently)."""


DENIED = "Access denied"


def attempts() -> dict[str, Attempt]:
    # ``{root}`` and ``{outside}`` are replaced by the bed's absolute paths.
    return {
        "dotdot-relative": Attempt("read_text_file", {"path": "../outside/secret.txt"}, DENIED),
        "dotdot-deep": Attempt("read_text_file", {"path": "../../../../../etc/passwd"}, DENIED),
        "absolute-outside": Attempt("read_text_file", {"path": "/etc/passwd"}, DENIED),
        "absolute-secret": Attempt("read_text_file", {"path": "{outside}/secret.txt"}, DENIED),
        "root-then-dotdot": Attempt(
            "read_text_file", {"path": "{root}/../outside/secret.txt"}, DENIED
        ),
        "inner-dotdot": Attempt(
            "read_text_file", {"path": "docs/../../outside/secret.txt"}, DENIED
        ),
        "sibling-prefix": Attempt("read_text_file", {"path": "{root}-evil/secret.txt"}, DENIED),
        "double-slash-root": Attempt("read_text_file", {"path": "//etc/passwd"}, DENIED),
        "home-tilde": Attempt("read_text_file", {"path": "~/.bashrc"}, DENIED),
        "windows-drive": Attempt("read_text_file", {"path": "C:\\Windows\\win.ini"}, DENIED),
        "symlinked-parent": Attempt("read_text_file", {"path": "link-out/secret.txt"}, DENIED),
        "symlinked-file": Attempt("read_text_file", {"path": "secret-link"}, DENIED),
        "relative-symlink-up": Attempt(
            "read_text_file", {"path": "up-link/outside/secret.txt"}, DENIED
        ),
        "symlink-chain": Attempt("read_text_file", {"path": "chain-a"}, DENIED),
        "nested-relative-symlink": Attempt(
            "read_text_file", {"path": "docs/rel-out/secret.txt"}, DENIED
        ),
        "hard-link-text": Attempt("read_text_file", {"path": "leak"}, "hard link"),
        "hard-link-media": Attempt("read_media_file", {"path": "leak"}, "hard link"),
        "hard-link-tail": Attempt("read_text_file", {"path": "leak", "tail": 1}, "hard link"),
        "media-through-symlink": Attempt("read_media_file", {"path": "secret-link"}, DENIED),
        "null-byte-read": Attempt(
            "read_text_file", {"path": "notes.txt\x00../../etc/passwd"}, DENIED
        ),
        "null-byte-write": Attempt("write_file", {"path": "made\x00.txt", "content": "x"}, DENIED),
        "write-dotdot": Attempt(
            "write_file", {"path": "../outside/planted.txt", "content": "x"}, DENIED
        ),
        "write-symlinked-parent": Attempt(
            "write_file", {"path": "link-out/planted.txt", "content": "x"}, DENIED
        ),
        "overwrite-through-symlink": Attempt(
            "write_file", {"path": "secret-link", "content": "pwned"}, DENIED
        ),
        "write-through-dangling-symlink": Attempt(
            "write_file", {"path": "dangling-out", "content": "x"}, ("Parent directory", DENIED)
        ),
        "edit-through-symlink": Attempt(
            "edit_file",
            {"path": "secret-link", "edits": [{"oldText": SECRET, "newText": "pwned"}]},
            DENIED,
        ),
        "mkdir-symlinked-parent": Attempt("create_directory", {"path": "link-out/made"}, DENIED),
        "mkdir-dotdot": Attempt("create_directory", {"path": "../outside/made"}, DENIED),
        "move-out": Attempt(
            "move_file", {"source": "notes.txt", "destination": "../outside/moved.txt"}, DENIED
        ),
        "move-into-symlinked-dir": Attempt(
            "move_file", {"source": "notes.txt", "destination": "link-out/moved.txt"}, DENIED
        ),
        "move-in-from-outside": Attempt(
            "move_file", {"source": "{outside}/secret.txt", "destination": "stolen.txt"}, DENIED
        ),
        "move-escaping-symlink": Attempt(
            "move_file", {"source": "secret-link", "destination": "kept.txt"}, DENIED
        ),
        "list-symlinked-dir": Attempt("list_directory", {"path": "link-out"}, DENIED),
        "list-filesystem-root": Attempt("list_directory", {"path": "/"}, DENIED),
        "list-parent": Attempt("list_directory", {"path": ".."}, DENIED),
        "sizes-parent": Attempt("list_directory_with_sizes", {"path": "{root}/.."}, DENIED),
        "tree-symlinked-dir": Attempt("directory_tree", {"path": "link-out"}, DENIED),
        "search-symlinked-dir": Attempt(
            "search_files", {"path": "link-out", "pattern": "*"}, DENIED
        ),
        "search-parent": Attempt(
            "search_files", {"path": "..", "pattern": "**/secret.txt"}, DENIED
        ),
        "info-outside": Attempt("get_file_info", {"path": "../outside/secret.txt"}, DENIED),
        "info-through-symlink": Attempt("get_file_info", {"path": "secret-link"}, DENIED),
        "very-long-path": Attempt(
            # Linux refuses the path as too long; the Docker backend's shell finds no such file
            "read_text_file",
            {"path": "a/" * 3000 + "x"},
            ("ENAMETOOLONG", "ENOENT"),
        ),
        "very-long-name-write": Attempt(
            "write_file", {"path": LONG_NAME, "content": "x"}, "ENAMETOOLONG"
        ),
        "fullwidth-dots": Attempt(
            "read_text_file", {"path": "\uff0e\uff0e/outside/secret.txt"}, "ENOENT"
        ),
        "one-dot-leader": Attempt(
            "read_text_file", {"path": "\u2025/outside/secret.txt"}, "ENOENT"
        ),
        "url-encoded-dots": Attempt(
            "read_text_file", {"path": "..%2f..%2foutside%2fsecret.txt"}, "ENOENT"
        ),
    }


ATTEMPTS = attempts()


def _fill(value: Any, bed: Bed) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", bed.tree.root).replace("{outside}", bed.outside)
    if isinstance(value, list):
        return [_fill(item, bed) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, bed) for key, item in value.items()}
    return value


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _shown(result: types.CallToolResult) -> str:
    """Everything a client received, binary blocks decoded."""
    import base64

    shown = _text(result)
    for block in result.content:
        if isinstance(block, types.ImageContent | types.AudioContent):
            shown += base64.b64decode(block.data).decode("utf-8", "replace")
    return shown


def test_the_suite_has_at_least_forty_distinct_attempts() -> None:
    assert len(ATTEMPTS) >= 40
    assert len({(a.tool, repr(a.arguments)) for a in ATTEMPTS.values()}) == len(ATTEMPTS)


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
async def test_escape_attempt_is_refused_and_changes_nothing(bed: Bed, name: str) -> None:
    attempt = ATTEMPTS[name]
    before = bed.fingerprint()
    async with Client(filesystem_server(bed.tree).server()) as client:
        result = await client.call_tool(attempt.tool, _fill(attempt.arguments, bed))
        # the server is still healthy after the attempt
        assert _text(await client.call_tool("read_text_file", {"path": "notes.txt"})) == "inside\n"
    assert result.is_error, _text(result)
    expected = (attempt.expected,) if isinstance(attempt.expected, str) else attempt.expected
    assert any(fragment in _text(result) for fragment in expected), _text(result)
    assert SECRET not in _shown(result)
    assert bed.fingerprint() == before


async def test_read_multiple_files_shows_the_refusal_in_place_of_the_secret(bed: Bed) -> None:
    before = bed.fingerprint()
    paths = ["notes.txt", "../outside/secret.txt", "secret-link", "leak", "link-out/secret.txt"]
    async with Client(filesystem_server(bed.tree).server()) as client:
        result = await client.call_tool("read_multiple_files", {"paths": paths})
    text = _text(result)
    assert "inside\n" in text
    assert SECRET not in text
    assert text.count("Error - Access denied") == len(paths) - 1
    assert bed.fingerprint() == before


async def test_inside_hard_links_and_symlinks_still_work(bed: Bed, tmp_path: Path) -> None:
    """The rules refuse escapes, not links: links that stay inside the tree are served."""
    async with Client(filesystem_server(bed.tree).server()) as client:
        created = await client.call_tool(
            "write_file", {"path": "docs/inner.txt", "content": "mine\n"}
        )
        assert not created.is_error
        if bed.outside.startswith("/outside"):
            container = bed.tree.container  # type: ignore[attr-defined]
            linked = container.exec_run(
                ["sh", "-c", "ln /sandbox/docs/inner.txt /sandbox/twin && ln -s docs /sandbox/d"]
            )
            assert linked.exit_code == 0
        else:
            root = Path(bed.tree.root)
            os.link(root / "docs" / "inner.txt", root / "twin")
            (root / "d").symlink_to("docs")
        twin = await client.call_tool("read_text_file", {"path": "twin"})
        assert _text(twin) == "mine\n"
        through = await client.call_tool("read_text_file", {"path": "d/inner.txt"})
        assert _text(through) == "mine\n"


def test_subprocess_standalone_server_refuses_traversal(tmp_path: Path) -> None:
    """The stdio entry point applies the same rule (checked with a raw JSON-RPC exchange)."""
    root, outside, evil = tmp_path / "root", tmp_path / "outside", tmp_path / "root-evil"
    _plant_host(root, outside, evil)
    import json
    import sys

    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "read_text_file", "arguments": {"path": "secret-link"}},
        },
    ]
    # Stdin stays open until the call's reply is read: the SDK's stdio server stops at end of
    # input and may drop a request still in flight, which made a one-shot exchange flaky.
    server = subprocess.Popen(
        [sys.executable, "-m", "mcp_servers.filesystem", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    watchdog = threading.Timer(60, server.kill)  # a hung server ends the read below
    watchdog.start()
    try:
        server.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        server.stdin.flush()
        output: list[str] = []
        call: dict[str, Any] | None = None
        while call is None:
            line = server.stdout.readline()
            assert line, f"the server ended without answering the call: {output}"
            output.append(line)
            reply = json.loads(line)
            call = reply if reply.get("id") == 2 else None
    finally:
        watchdog.cancel()
        server.stdin.close()
        server.wait(timeout=60)
    assert call["result"]["isError"] is True
    assert DENIED in call["result"]["content"][0]["text"]
    assert SECRET not in "".join(output)

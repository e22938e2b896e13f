"""The bubblewrap box: its user, network, files, environment, output and end (real bwrap)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from sandboxes.confinement import (
    BOX_USER,
    LOG_HEAD_BYTES,
    TAIL_BYTES,
    WORK_MOUNT,
    BoxRun,
    BoxSpec,
    ConfinementError,
    box_command,
    run_in_box,
)

ROOT = os.geteuid() == 0


def readable_folder(path: Path, files: dict[str, str]) -> Path:
    """A folder anyone may read (pytest's own folders are private to their owner)."""
    path.mkdir(parents=True)
    path.chmod(0o755)
    for name, text in files.items():
        (path / name).write_text(text)
        (path / name).chmod(0o644)
    return path


async def boxed(
    tmp_path: Path,
    code: str,
    *,
    read_only: Sequence[Path] = (),
    environment: dict[str, str] | None = None,
    timeout: float = 30,
) -> BoxRun:
    """Run ``code`` as ``main.py`` in a box whose work folder and log stay in ``tmp_path/box``."""
    folder = readable_folder(tmp_path / "code", {"main.py": textwrap.dedent(code)})
    spec = BoxSpec(
        command=[sys.executable, "main.py"],
        cwd=folder,
        read_only=[folder, *read_only],
        environment=environment or {},
        timeout=timeout,
    )
    return await run_in_box(spec, folder=tmp_path / "box")


def report(run: BoxRun) -> dict[str, Any]:
    """The JSON object a boxed script printed last."""
    found: dict[str, Any] = json.loads(run.text(10**6).strip().splitlines()[-1])
    return found


def processes_with(marker: str) -> list[psutil.Process]:
    """Live processes (other than this one) whose command line holds ``marker``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.pid == os.getpid() or process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if marker in " ".join(process.info["cmdline"] or []):
            found.append(process)
    return found


async def test_the_box_runs_unprivileged_with_its_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = secrets.token_hex(8)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    (tmp_path / "beside.txt").write_text("host file")
    run = await boxed(
        tmp_path,
        f"""\
        import json, os
        import asyncpg  # the runtime's packages are there
        def attempt(action):
            try:
                action()
                return "allowed"
            except OSError as error:
                return type(error).__name__
        status = open("/proc/self/status").read()
        print(json.dumps({{
            "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
            "caps": [line.split()[1] for line in status.splitlines() if line.startswith("Cap")],
            "environment": dict(os.environ),
            "shadow": attempt(lambda: open("/etc/shadow").read()),
            "beside": os.path.exists({str(tmp_path / "beside.txt")!r}),
            "host home": os.path.exists("/root/.bashrc") or os.path.exists("/root/.profile"),
            "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        }}))
        """,
        environment={"TASK_SETTING": "on"},
    )
    assert run.exit_code == 0, run.text(4000)
    seen = report(run)
    expected_user = BOX_USER if ROOT else os.getuid()
    assert (seen["uid"], seen["gid"]) == (expected_user, BOX_USER if ROOT else os.getgid())
    assert set(seen["caps"]) == {"0000000000000000"}
    environment = seen["environment"]
    assert isinstance(environment, dict)
    assert secret not in json.dumps(environment)
    assert set(environment) - {"LC_CTYPE", "PWD"} == {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONNOUSERSITE",
        "PYTHONUNBUFFERED",
        "TASK_SETTING",
    }
    assert environment["HOME"] == str(WORK_MOUNT)
    if ROOT:
        assert seen["shadow"] == "PermissionError"
    assert seen["beside"] is False
    assert seen["host home"] is False
    assert seen["processes"] == [1, 2]  # its own pid space: bubblewrap's reaper, the script


async def test_the_box_has_no_network(tmp_path: Path) -> None:
    accepted: list[object] = []

    async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer.get_extra_info("peername"))
        writer.close()

    server = await asyncio.start_server(note, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        run = await boxed(
            tmp_path,
            f"""\
            import json, socket
            results = {{}}
            for host in ("127.0.0.1", "192.0.2.1"):
                try:
                    socket.create_connection((host, {port}), timeout=5).close()
                    results[host] = "connected"
                except OSError as error:
                    results[host] = error.strerror
            print(json.dumps(results))
            """,
        )
    assert run.exit_code == 0, run.text(4000)
    # The box's loopback is its own (nothing listens there); nothing else has a route.
    assert report(run) == {
        "127.0.0.1": "Connection refused",
        "192.0.2.1": "Network is unreachable",
    }
    assert accepted == []


async def test_only_the_work_folder_and_tmp_are_writable(tmp_path: Path) -> None:
    data = readable_folder(tmp_path / "data", {"a.txt": "alpha"})
    # Modes that would let anyone write: only the read-only bind stands in the way.
    data.chmod(0o777)
    (data / "a.txt").chmod(0o666)
    host_tmp = Path("/tmp") / f"aj-box-test-{secrets.token_hex(6)}"
    targets = {
        "home": f"{WORK_MOUNT}/note.txt",
        "tmpdir": f"{WORK_MOUNT}/tmp/note.txt",
        "tmp": str(host_tmp),
        "data": str(data / "b.txt"),
        "data change": str(data / "a.txt"),
        "code": str(tmp_path / "code" / "written.txt"),
        "beside": str(tmp_path / "written.txt"),
        "root": "/written.txt",
        "usr": "/usr/written.txt",
        "etc": "/etc/written.txt",
    }
    run = await boxed(
        tmp_path,
        f"""\
        import json
        results = {{}}
        for name, path in {targets!r}.items():
            try:
                with open(path, "a") as handle:
                    handle.write("box was here")
                results[name] = "written"
            except OSError as error:
                results[name] = error.strerror
        print(json.dumps(results))
        """,
        read_only=[data],
    )
    assert run.exit_code == 0, run.text(4000)
    results = report(run)
    assert {name: results[name] for name in ("home", "tmpdir", "tmp")} == dict.fromkeys(
        ("home", "tmpdir", "tmp"), "written"
    )
    for name in ("data", "data change"):
        assert results[name] == "Read-only file system", name
    for name in ("code", "beside", "root", "usr", "etc"):
        assert results[name] in ("Read-only file system", "Permission denied"), name
    # Nothing reached the host but the work folder.
    assert not host_tmp.exists()
    assert sorted(p.name for p in data.iterdir()) == ["a.txt"]
    assert (data / "a.txt").read_text() == "alpha"
    assert sorted(p.name for p in (tmp_path / "code").iterdir()) == ["main.py"]
    assert not (tmp_path / "written.txt").exists()
    assert not Path("/written.txt").exists()
    assert (tmp_path / "box" / "work" / "note.txt").read_text() == "box was here"


async def test_symlinks_cannot_reach_what_is_not_bound(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the task")
    data = readable_folder(tmp_path / "data", {})
    (data / "absolute").symlink_to(secret)
    (data / "relative").symlink_to("../secret.txt")
    run = await boxed(
        tmp_path,
        """\
        import json, os
        results = {}
        for name in ("absolute", "relative"):
            try:
                results[name] = open(os.path.join(os.environ["DATA"], name)).read()
            except OSError as error:
                results[name] = error.strerror
        print(json.dumps(results))
        """,
        read_only=[data],
        environment={"DATA": str(data)},
    )
    assert run.exit_code == 0, run.text(4000)
    assert report(run) == {
        "absolute": "No such file or directory",
        "relative": "No such file or directory",
    }


GRANDCHILD = """\
import os, subprocess, sys, time
# A grandchild that leaves the session and closes its output, so no pipe or group holds it.
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)", "{marker}"],
    start_new_session=True,
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
print("started", flush=True)
time.sleep({sleep})
"""


async def test_what_the_command_started_dies_when_it_ends(tmp_path: Path) -> None:
    marker = f"aj-orphan-{secrets.token_hex(6)}"
    run = await boxed(tmp_path, GRANDCHILD.format(marker=marker, sleep=0.5))
    assert run.exit_code == 0, run.text(4000)
    assert "started" in run.text(4000)
    assert processes_with(marker) == []


async def test_a_box_past_its_timeout_is_killed_whole(tmp_path: Path) -> None:
    marker = f"aj-orphan-{secrets.token_hex(6)}"
    run = await boxed(tmp_path, GRANDCHILD.format(marker=marker, sleep=120), timeout=1.5)
    assert run.timed_out
    assert run.exit_code is None
    assert run.seconds < 10
    assert "started" in run.text(4000)  # what it printed before the kill is kept
    assert processes_with(marker) == []


async def test_cancelling_the_caller_kills_the_box(tmp_path: Path) -> None:
    marker = f"aj-orphan-{secrets.token_hex(6)}"
    running = asyncio.create_task(boxed(tmp_path, GRANDCHILD.format(marker=marker, sleep=120)))
    for _ in range(200):
        if processes_with(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_with(marker), "the grandchild never started"
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert processes_with(marker) == []


async def test_output_goes_to_a_capped_log(tmp_path: Path) -> None:
    size = 3 * 2**20
    run = await boxed(
        tmp_path,
        f"""\
        import sys
        out = sys.stdout.buffer
        out.write(b"FIRST\\n")
        for i in range({size} // 1024):
            out.write(b"%07d" % i + b"." * 1017)
        sys.stderr.write("LAST\\n")
        """,
    )
    assert run.exit_code == 0
    total = 6 + size + 5
    assert run.output_bytes == total
    log = run.log.read_bytes()
    cut = total - LOG_HEAD_BYTES - TAIL_BYTES
    note = f"\n[... {cut} bytes cut ...]\n".encode()
    assert len(log) == LOG_HEAD_BYTES + len(note) + TAIL_BYTES
    assert log.startswith(b"FIRST\n0000000....")
    assert log[LOG_HEAD_BYTES : LOG_HEAD_BYTES + len(note)] == note
    assert log.endswith(b"......LAST\n")
    excerpt = run.text(8000)
    assert len(excerpt) < 8100
    assert excerpt.startswith("FIRST\n0000000")
    assert excerpt.endswith("LAST\n")
    assert f"[... {total - 8000} bytes cut ...]" in excerpt


async def test_short_output_is_kept_whole_and_in_order(tmp_path: Path) -> None:
    run = await boxed(
        tmp_path,
        """\
        import sys
        print("one")
        print("two", file=sys.stderr)
        print("three")
        sys.exit(3)
        """,
    )
    assert run.exit_code == 3
    assert run.text(8000) == "one\ntwo\nthree\n"
    assert run.log.read_text() == "one\ntwo\nthree\n"


async def test_the_default_folder_is_removed_after_the_run(tmp_path: Path) -> None:
    folder = readable_folder(tmp_path / "code", {"main.py": "open('/box/x', 'w').write('x')\n"})
    spec = BoxSpec(command=[sys.executable, "main.py"], cwd=folder, read_only=[folder])
    run = await run_in_box(spec)
    assert run.exit_code == 0
    assert not run.log.parent.exists()


async def test_unprivileged_set_up() -> None:
    """The command line for a caller that is not root (bubblewrap in a user namespace): run as
    the box user (Debian's own python, in folders it can reach), it builds the same walls."""
    scratch = Path(tempfile.mkdtemp(prefix="aj-box-test-", dir="/tmp"))
    try:
        scratch.chmod(0o755)
        folder = readable_folder(
            scratch / "code",
            {
                "main.py": textwrap.dedent("""\
                    import json, os, socket
                    try:
                        socket.create_connection(("192.0.2.1", 9), timeout=5)
                        network = "connected"
                    except OSError as error:
                        network = error.strerror
                    print(json.dumps({"uid": os.getuid(), "network": network,
                                      "home": os.environ["HOME"],
                                      "secret": "OPENAI_API_KEY" in os.environ,
                                      "caps": sorted({line.split()[1] for line in open(
                                          "/proc/self/status") if line.startswith("Cap")})}))
                    """)
            },
        )
        work = scratch / "work"
        (work / "tmp").mkdir(parents=True)
        caller: list[str] = []
        if ROOT:
            for path in (work, work / "tmp"):
                os.chown(path, BOX_USER, BOX_USER)
            caller = ["setpriv", f"--reuid={BOX_USER}", f"--regid={BOX_USER}", "--clear-groups"]
        spec = BoxSpec(
            command=["/usr/bin/python3", "main.py"],
            cwd=folder,
            read_only=[folder],
            interpreter=False,
        )
        argv = [*caller, *box_command(spec, work, privileged=False)]
        assert "setpriv" not in argv[len(caller) :]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "OPENAI_API_KEY": "x"},
        )
        output, _ = await process.communicate()
    finally:
        shutil.rmtree(scratch)
    assert process.returncode == 0, output
    seen = json.loads(output.decode().splitlines()[-1])
    assert seen == {
        "uid": BOX_USER if ROOT else os.getuid(),
        "network": "Network is unreachable",
        "home": str(WORK_MOUNT),
        "secret": False,
        "caps": ["0000000000000000"],
    }


async def test_a_missing_bubblewrap_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    spec = BoxSpec(command=["true"], cwd=tmp_path)
    with pytest.raises(ConfinementError, match=r"apt-get install bubblewrap"):
        await run_in_box(spec, folder=tmp_path / "box")
    assert shutil.which("bwrap") is None


async def test_a_missing_path_to_bind_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    spec = BoxSpec(command=["true"], cwd=tmp_path, read_only=[missing])
    with pytest.raises(ConfinementError, match=f"cannot bind {missing} into the box"):
        await run_in_box(spec, folder=tmp_path / "box")
    assert not (tmp_path / "box").exists()

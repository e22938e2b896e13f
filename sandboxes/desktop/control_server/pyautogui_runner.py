"""A warm pyautogui interpreter that runs each piece of recorded code in a fork of itself.

Recorded actions arrive as ``python3 -c "import pyautogui; ..."`` commands; starting an
interpreter and importing pyautogui costs about a quarter of a second each time. The runner is
one interpreter that imported pyautogui once; for each piece of code it forks, and the child
opens its own X connection (pyautogui's is the runner's, whose request numbering a child must not
advance), runs the code as ``python -c`` would (``__name__ == "__main__"``, its output and exit
status captured) and exits. The parent answers with ``{output, error, returncode}``, killing a
child that runs past its time. The control server sends it one request at a time, as JSON lines
on its standard input, and falls back to a plain interpreter when the runner is not available.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from typing import Any

_CHUNK = 65536


def _child(code: str, out: int, err: int) -> None:
    """Runs in the forked child: never returns."""
    status = 0
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        from pyautogui import _pyautogui_x11
        from Xlib.display import Display

        _pyautogui_x11._display = Display(os.environ["DISPLAY"])
        sys.argv = ["-c"]
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as stop:
        if isinstance(stop.code, int):
            status = stop.code
        elif stop.code is not None:
            print(stop.code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _run_one(code: str, timeout: float) -> dict[str, Any]:
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_read)
        os.close(err_read)
        _child(code, out_write, err_write)
    os.close(out_write)
    os.close(err_write)
    chunks: dict[int, list[bytes]] = {out_read: [], err_read: []}
    open_fds = [out_read, err_read]
    deadline = time.monotonic() + timeout
    timed_out = False
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(open_fds, [], [], left)
        for fd in ready:
            data = os.read(fd, _CHUNK)
            if data:
                chunks[fd].append(data)
            else:
                open_fds.remove(fd)
    if timed_out:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    for fd in (out_read, err_read):
        os.close(fd)
    error = b"".join(chunks[err_read]).decode(errors="replace")
    if timed_out:
        error += f"\ntimed out after {timeout:g} s"
    return {
        "output": b"".join(chunks[out_read]).decode(errors="replace"),
        "error": error,
        "returncode": -9 if timed_out else os.waitstatus_to_exitcode(status),
    }


def serve() -> None:
    """The runner's loop: one JSON request per line in, one JSON answer per line out."""
    import pyautogui  # noqa: F401 - the import this process exists to do once

    sys.stdout.write('{"ready": true}\n')
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        answer = _run_one(str(request["code"]), float(request.get("timeout", 120)))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class Runner:
    """The server's handle on one runner process, started on first use and restarted if it
    died; requests are sent one at a time."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self.broken = False
        """True once the runner could not start here (no pyautogui): callers fall back."""

    def _ensure(self) -> subprocess.Popen[str] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if self.broken:
            return None
        process = subprocess.Popen(  # this very module, in the desktop's python
            [sys.executable, "-m", f"{__package__}.pyautogui_runner"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert process.stdout is not None
        if '"ready"' not in process.stdout.readline():
            process.kill()
            process.wait()
            self.broken = True
            return None
        self._process = process
        return process

    def run(self, code: str, timeout: float) -> dict[str, Any] | None:
        """Run ``code``; None when no runner can work here (the caller runs it another way)."""
        with self._lock:
            process = self._ensure()
            if process is None or process.stdin is None or process.stdout is None:
                return None
            try:
                process.stdin.write(json.dumps({"code": code, "timeout": timeout}) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
            except OSError:
                line = ""
            if not line:  # it died under this request: report it, start afresh next time
                process.kill()
                process.wait()
                self._process = None
                return {"output": "", "error": "the pyautogui runner died", "returncode": -9}
            answer: dict[str, Any] = json.loads(line)
            return answer

    def stop(self) -> None:
        """Stop the runner process."""
        with self._lock:
            if self._process is not None:
                self._process.kill()
                self._process.wait()
                self._process = None


if __name__ == "__main__":
    serve()

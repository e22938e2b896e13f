"""The HTTP endpoints of OSWorld's control protocol, on a TCP port or a Unix socket.

Answers follow OSWorld's server: ``GET /screenshot`` (PNG), ``GET /accessibility``
(``{"AT": xml}``), ``POST /execute`` and ``/setup/execute`` (``{command, shell, timeout}`` ->
``{status, output, error, returncode}``), ``POST /run_python`` (``{code}``), ``POST
/run_bash_script`` (``{script, timeout, working_dir}``), ``/screen_size``, ``/cursor_position``,
``POST /file`` (form ``file_path`` -> the file's bytes), ``POST /setup/upload`` (multipart
``file_path`` + ``file_data``), ``/setup/open_file``, ``/setup/launch``,
``/setup/activate_window``, ``/setup/close_window`` and ``GET /platform``. Additions of this
server: ``GET /health``, ``GET /windows`` (the managed windows and their titles; with
``?title=PART&timeout=T`` it answers once a title holds ``PART``, or after ``T`` seconds), and
``GET /screenshot?settle=QUIET&timeout=T``: the screen once it stayed the same for ``QUIET``
seconds (headers ``X-Screen-Settled``, ``X-Screen-Waited``; with ``changed=1``, only once
something was drawn after the last such wait, else ``204 No Content`` after ``T`` seconds),
and ``format=pgm`` on either
screenshot for the raw pixels in grey; OSWorld's server ignores the query and answers a PNG at once,
without those headers.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import re
import shlex
import signal
import socketserver
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from .pyautogui_runner import Runner
from .screen import Screen, pgm_bytes, png_bytes

if TYPE_CHECKING:
    from PIL import Image

MAX_BODY_BYTES = 512 * 2**20
"""Largest request body accepted (an uploaded document)."""

DEFAULT_COMMAND_TIMEOUT = 120.0
"""Seconds a command sent to ``/execute`` may run unless the request names another limit."""

MAX_SETTLE_SECONDS = 60.0
"""Longest ``settle`` or ``timeout`` a ``GET /screenshot?settle=QUIET&timeout=T`` (or a
``GET /windows?title=PART&timeout=T``) may ask for."""

WINDOW_POLL_SECONDS = 0.05
"""Seconds between looks at the window titles while ``GET /windows?title=...`` waits: a look is
a few X requests here, where a client polling ``/windows`` pays a request and an answer each
time (on the host and in this server) while the desktop is still starting."""

SETTLED_HEADER = "X-Screen-Settled"
"""Answer header of a settled screenshot: ``1`` when the screen stayed still for ``settle``
seconds, ``0`` when ``timeout`` passed first."""

WAITED_HEADER = "X-Screen-Waited"
"""Answer header of a settled screenshot: the seconds the server waited."""

IMAGE_FORMATS: dict[str, tuple[Callable[[Image.Image], bytes], str]] = {
    "png": (png_bytes, "image/png"),
    "pgm": (pgm_bytes, "image/x-portable-graymap"),
}
"""What ``GET /screenshot?format=`` may ask for, with its encoder and content type: PNG (the
default, what OSWorld's server answers) or the raw pixels in grey as a binary PGM, for a client
on the same machine that only compares the screen (replay): no compression on either side, and
a third of the raw colour pixels' bytes to send and read (a comparison works on grey anyway)."""

OPEN_FILE_TIMEOUT = 60.0
"""Seconds ``/setup/open_file`` waits for a window showing the opened file."""

OFFICE_SUFFIXES = frozenset(
    {
        ".doc",
        ".docx",
        ".odt",
        ".rtf",
        ".txt",
        ".xls",
        ".xlsx",
        ".ods",
        ".csv",
        ".ppt",
        ".pptx",
        ".odp",
    }
)
"""Files ``/setup/open_file`` hands to LibreOffice (others go to ``xdg-open``)."""


class HttpError(Exception):
    """A request the server refuses, with the status to answer."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class ServerState:
    """What every request handler shares: the screen and how to open office files."""

    def __init__(self, screen: Screen, office_command: Sequence[str]) -> None:
        self.screen = screen
        self.office_command = list(office_command)
        """The command (before the file) that opens a document in this desktop's LibreOffice."""
        self.runner = Runner()
        """Runs ``python -c`` commands that use pyautogui in a warm interpreter."""


def _run(
    command: str | list[str], shell: bool, timeout: float, cwd: str | None = None
) -> dict[str, Any]:
    if isinstance(command, str) and not shell:
        command = shlex.split(command)
    process = subprocess.Popen(
        command,
        shell=shell,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        output, error = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, error = process.communicate()
        error += f"\ntimed out after {timeout:g} s"
        return {"status": "error", "output": output, "error": error, "returncode": -9}
    return {"status": "success", "output": output, "error": error, "returncode": process.returncode}


class Handler(BaseHTTPRequestHandler):
    """One request; the routes are the ``_get_*`` and ``_post_*`` methods."""

    server_version = "agentjudge-desktop/1"
    state: ServerState

    # -- plumbing --------------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"control server: {format % args}\n")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # one line per request would drown the session's log

    def do_GET(self) -> None:
        self._dispatch("get")

    def do_POST(self) -> None:
        self._dispatch("post")

    def _dispatch(self, method: str) -> None:
        path = urllib.parse.urlsplit(self.path).path.rstrip("/") or "/"
        route = getattr(self, f"_{method}_{path.strip('/').replace('/', '__')}", None)
        if route is None and method == "get":
            route = getattr(self, f"_post_{path.strip('/').replace('/', '__')}", None)
            route = route if getattr(route, "any_method", False) else None
        try:
            if route is None:
                raise HttpError(HTTPStatus.NOT_FOUND, f"no endpoint {method.upper()} {path}")
            route()
        except HttpError as error:
            self._json({"status": "error", "message": str(error)}, error.status)
        except Exception as error:  # the client gets the reason; the server keeps serving
            self._json({"status": "error", "message": f"{type(error).__name__}: {error}"},
                       HTTPStatus.INTERNAL_SERVER_ERROR)  # fmt: skip

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise HttpError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY_BYTES} bytes"
            )
        return self.rfile.read(length) if length else b""

    def _form(self) -> dict[str, Any]:
        """The request's fields: JSON, urlencoded or multipart (file parts as bytes)."""
        body = self._body()
        kind = self.headers.get("Content-Type") or ""
        if kind.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {kind}\r\n\r\n".encode() + body
            )
            fields: dict[str, Any] = {}
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = part.get_payload(decode=True)
                data = payload if isinstance(payload, bytes) else b""
                fields[str(name)] = data if part.get_filename() else data.decode()
            return fields
        if kind.startswith("application/x-www-form-urlencoded") and not body.startswith(b"{"):
            return {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
        if not body:
            return {}
        try:
            data = json.loads(body)
        except ValueError as error:
            raise HttpError(HTTPStatus.BAD_REQUEST, f"the body is not JSON: {error}") from None
        if not isinstance(data, dict):
            raise HttpError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
        return data

    def _send(self, status: HTTPStatus, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, value: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        self._send(status, "application/json", json.dumps(value).encode())

    def _text(self, value: str) -> None:
        self._send(HTTPStatus.OK, "text/plain; charset=utf-8", value.encode())

    @staticmethod
    def _field(form: dict[str, Any], name: str) -> Any:
        if name not in form or form[name] in (None, ""):
            raise HttpError(HTTPStatus.BAD_REQUEST, f"missing field {name!r}")
        return form[name]

    # -- observations ----------------------------------------------------------------------------

    def _get_health(self) -> None:
        self._json({"status": "ok"})

    def _get_platform(self) -> None:
        self._text("Linux")

    def _get_screenshot(self) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        image_format = query.get("format", ["png"])[0]
        if image_format not in IMAGE_FORMATS:
            raise HttpError(
                HTTPStatus.BAD_REQUEST, f"'format' must be one of {', '.join(IMAGE_FORMATS)}"
            )
        encode, content_type = IMAGE_FORMATS[image_format]
        if "settle" not in query:
            self._send(HTTPStatus.OK, content_type, encode(self.state.screen.screenshot()))
            return
        try:
            quiet = float(query["settle"][0])
            timeout = float(query.get("timeout", ["5"])[0])
        except ValueError:
            raise HttpError(
                HTTPStatus.BAD_REQUEST, "'settle' and 'timeout' must be numbers"
            ) from None
        if not (0 <= quiet <= MAX_SETTLE_SECONDS and 0 <= timeout <= MAX_SETTLE_SECONDS):
            raise HttpError(
                HTTPStatus.BAD_REQUEST, f"'settle' and 'timeout' must be 0-{MAX_SETTLE_SECONDS:g} s"
            )
        after_change = query.get("changed", ["0"])[0] == "1"
        image, settled, waited = self.state.screen.settled_screenshot(
            quiet, timeout, after_change=after_change
        )
        data = b"" if image is None else encode(image)
        self.send_response(HTTPStatus.OK if image is not None else HTTPStatus.NO_CONTENT)
        if image is not None:
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
        self.send_header(SETTLED_HEADER, "1" if settled else "0")
        self.send_header(WAITED_HEADER, f"{waited:.3f}")
        self.end_headers()
        self.wfile.write(data)

    def _get_accessibility(self) -> None:
        from .accessibility import accessibility_tree_xml

        self._json({"AT": accessibility_tree_xml(self.state.screen.size())})

    def _post_screen_size(self) -> None:
        width, height = self.state.screen.size()
        self._json({"width": width, "height": height})

    _post_screen_size.any_method = True  # type: ignore[attr-defined]

    def _post_cursor_position(self) -> None:
        self._json(list(self.state.screen.cursor_position()))

    _post_cursor_position.any_method = True  # type: ignore[attr-defined]

    def _get_windows(self) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        windows = self.state.screen.window_titles()
        if "title" in query:
            part = query["title"][0]
            try:
                timeout = float(query.get("timeout", ["0"])[0])
            except ValueError:
                raise HttpError(HTTPStatus.BAD_REQUEST, "'timeout' must be a number") from None
            if not 0 <= timeout <= MAX_SETTLE_SECONDS:
                raise HttpError(
                    HTTPStatus.BAD_REQUEST, f"'timeout' must be 0-{MAX_SETTLE_SECONDS:g} s"
                )
            deadline = time.monotonic() + timeout
            while not any(part in title for _, title in windows) and time.monotonic() < deadline:
                time.sleep(WINDOW_POLL_SECONDS)
                windows = self.state.screen.window_titles()
        self._json([{"id": wid, "title": title} for wid, title in windows])

    # -- commands --------------------------------------------------------------------------------

    def _post_execute(self) -> None:
        form = self._form()
        command = self._field(form, "command")
        if not isinstance(command, str | list):
            raise HttpError(HTTPStatus.BAD_REQUEST, "'command' must be a string or a list")
        timeout = float(form.get("timeout") or DEFAULT_COMMAND_TIMEOUT)
        shell = bool(form.get("shell", False))
        if not shell and _is_pyautogui_code(command):
            answer = self.state.runner.run(command[2], timeout)
            if answer is not None:
                timed_out = answer["returncode"] == -9 and "timed out" in answer["error"]
                self._json({"status": "error" if timed_out else "success", **answer})
                return
        self._json(_run(command, shell, timeout))

    _post_setup__execute = _post_execute

    def _post_run_python(self) -> None:
        form = self._form()
        code = self._field(form, "code")
        timeout = float(form.get("timeout") or DEFAULT_COMMAND_TIMEOUT)
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
            handle.write(str(code))
        try:
            result = _run([sys.executable, handle.name], False, timeout)
        finally:
            os.unlink(handle.name)
        ok = result["returncode"] == 0
        self._json(
            {
                "status": "success" if ok else "error",
                "message": "" if ok else result["error"],
                "output": result["output"],
                "error": result["error"],
                "return_code": result["returncode"],
            }
        )

    def _post_run_bash_script(self) -> None:
        form = self._form()
        script = self._field(form, "script")
        timeout = float(form.get("timeout") or 100)
        directory = form.get("working_dir") or None
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as handle:
            handle.write(str(script))
        try:
            self._json(_run(["/bin/bash", handle.name], False, timeout, directory))
        finally:
            os.unlink(handle.name)

    def _post_setup__launch(self) -> None:
        form = self._form()
        command = self._field(form, "command")
        shell = bool(form.get("shell", False))
        if isinstance(command, str) and not shell:
            command = shlex.split(command)
        subprocess.Popen(
            command, shell=shell, start_new_session=True, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._text(f"{command} launched successfully")

    # -- files -----------------------------------------------------------------------------------

    def _post_file(self) -> None:
        path = Path(str(self._field(self._form(), "file_path"))).expanduser()
        if not path.is_file():
            raise HttpError(HTTPStatus.NOT_FOUND, f"no file {path}")
        self._send(HTTPStatus.OK, "application/octet-stream", path.read_bytes())

    def _post_setup__upload(self) -> None:
        form = self._form()
        path = Path(str(self._field(form, "file_path"))).expanduser()
        data = self._field(form, "file_data")
        if not isinstance(data, bytes):
            raise HttpError(HTTPStatus.BAD_REQUEST, "'file_data' must be a file part")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self._text("File uploaded")

    def _post_setup__open_file(self) -> None:
        form = self._form()
        path = Path(str(self._field(form, "path"))).expanduser()
        if not path.exists():
            raise HttpError(HTTPStatus.NOT_FOUND, f"no file {path}")
        if path.suffix.lower() in OFFICE_SUFFIXES and self.state.office_command:
            command = [*self.state.office_command, str(path)]
        else:
            command = ["xdg-open", str(path)]
        subprocess.Popen(
            command, start_new_session=True, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        timeout = float(form.get("timeout") or OPEN_FILE_TIMEOUT)
        if not _wait_for(
            lambda: any(path.name in t for _, t in self.state.screen.window_titles()), timeout
        ):
            raise HttpError(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                f"no window showed {path.name} within {timeout:g} s",
            )
        self._text("File opened successfully")

    # -- windows ---------------------------------------------------------------------------------

    def _wmctrl(self, action: str) -> None:
        form = self._form()
        name = str(self._field(form, "window_name"))
        options = ["-F"] if form.get("strict") else []
        options += ["-x"] if form.get("by_class") else []
        result = _run(["wmctrl", *options, action, name], False, 10)
        if result["returncode"] != 0:
            raise HttpError(HTTPStatus.NOT_FOUND, f"no window {name!r}: {result['error'].strip()}")

    def _post_setup__activate_window(self) -> None:
        self._wmctrl("-a")
        self._text("Window activated successfully")

    def _post_setup__close_window(self) -> None:
        self._wmctrl("-c")
        self._text("Window closed successfully")


_PYTHON = re.compile(r"python3?(\.\d+)?")


def _is_pyautogui_code(command: object) -> TypeGuard[list[str]]:
    """Whether ``command`` is ``python -c CODE`` with CODE using pyautogui (what OSWorld's
    clients send for an action): the warm runner gives the same result, faster."""
    return (
        isinstance(command, list)
        and len(command) == 3
        and all(isinstance(part, str) for part in command)
        and _PYTHON.fullmatch(Path(command[0]).name) is not None
        and command[1] == "-c"
        and "pyautogui" in command[2]
    )


def _wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self) -> tuple[Any, Any]:
        connection, _ = super().get_request()
        return connection, ("unix", 0)  # http.server logs client_address[0]


def make_server(state: ServerState, *, host: str = "127.0.0.1", port: int | None = None,
                socket_path: str | None = None) -> socketserver.BaseServer:  # fmt: skip
    """A threaded server on ``socket_path`` (a Unix socket) or ``host``:``port``."""
    handler = type("BoundHandler", (Handler,), {"state": state})
    if socket_path is not None:
        with_path = Path(socket_path)
        with_path.unlink(missing_ok=True)
        server: socketserver.BaseServer = _UnixHTTPServer(socket_path, handler)
        os.chmod(socket_path, 0o660)
        return server
    threaded = ThreadingHTTPServer((host, port or 5000), handler)
    threaded.daemon_threads = True
    return threaded

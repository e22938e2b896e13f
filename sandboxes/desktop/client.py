"""An async client of OSWorld's control protocol: one client for every desktop backend.

Speaks to the project's own control server (``sandboxes.desktop.control_server``) over a Unix
socket (``local`` and ``docker`` desktops), and to an OSWorld VM's server by URL (``osworld``).
Every failure raises ``DesktopControlError`` naming the endpoint and the server's reason.

A desktop's socket is made by the desktop's own user, whose code (recorded steps, a dataset's
``pyautogui`` code, a document's macros) must not steer the runtime's requests elsewhere. The
client therefore reaches it as ``sandboxes.sandbox_sockets`` says: before every request the
socket's name is checked (``lstat``: a socket of the desktop's user, not a link), and every new
connection is made to a descriptor opened without following links and checked
(``SocketTransport``). A swapped socket raises ``UnsafeSocketError`` naming the socket and the
desktop, and nothing is sent.

OSWorld's own server differs from ours in ways the client evens out or names: its accessibility
tree places LibreOffice's widgets a native menu bar's height (25 px) above where they are drawn,
which the client corrects (``tree_geometry``) for every server that is not this project's; it
has no ``/run_python`` or ``/run_bash_script`` and answers ``/cursor_position`` with a 500, which
raise errors saying so; and the fork users run fails ``/execute`` on Linux (a Windows-only
``subprocess`` flag), which is reported as that server's fault rather than the command's.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
from pathlib import Path
from typing import Any, Literal, Self

import httpcore2
import httpx2
from pydantic import BaseModel, ConfigDict

from sandboxes.base import SandboxError
from sandboxes.desktop.control_server.tree_geometry import corrected_tree
from sandboxes.sandbox_sockets import SandboxSocket, UnsafeSocketError

DEFAULT_TIMEOUT = 60.0
"""Seconds one request may take unless the call names another limit."""

OWN_SERVER = "agentjudge-desktop/"
"""How this project's control server names itself in its ``Server`` header."""

_MISSING_ON_OSWORLD = {
    "/run_python": "OSWorld's own server has no /run_python (run code through /execute)",
    "/run_bash_script": "OSWorld's own server has no /run_bash_script (use /execute)",
    "/windows": "only this project's control server lists windows",
    "/health": "only this project's control server has /health",
}
"""Endpoints some servers lack, with what to know about it."""

_WINDOWS_ONLY_FLAG = ("CREATE_NO_WINDOW", "creationflags", "STARTUPINFO")
"""Words in the error of a server that passes a Windows-only flag to ``subprocess`` on Linux."""

ImageFormat = Literal["png", "pgm"]
"""How a screenshot travels: ``png`` (OSWorld's protocol, what is stored and shown) or ``pgm``
(raw grey pixels, no compression: for a look that is only compared, on the same machine)."""


class DesktopControlError(SandboxError):
    """The control server refused a request, failed it, or could not be reached."""


class CommandResult(BaseModel):
    """What ``/execute``, ``/run_python`` and ``/run_bash_script`` answer."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    status: str = "success"
    """``success`` when the command ran (whatever its exit code), ``error`` otherwise."""
    output: str = ""
    """Its standard output."""
    error: str = ""
    """Its standard error (and the server's reason when it could not run it)."""
    returncode: int | None = None
    """Its exit code (negative: killed by that signal); None when the server gave none."""

    @property
    def ok(self) -> bool:
        """The command ran and exited with 0."""
        return self.status == "success" and self.returncode in (0, None)


class _CheckedBackend(httpcore2.AsyncNetworkBackend):
    """Opens each new connection to a sandbox's socket through ``SandboxSocket.open``: the
    connection goes to ``/proc/self/fd/N``, the very file just checked."""

    def __init__(self, socket: SandboxSocket) -> None:
        self.socket = socket
        self._inner = httpcore2.AnyIOBackend()

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Any = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            descriptor = self.socket.open()
        except OSError as error:  # not there yet: as a refused connection
            raise httpcore2.ConnectError(f"{self.socket.path}: {error.strerror}") from error
        try:
            return await self._inner.connect_unix_socket(
                f"/proc/self/fd/{descriptor}", timeout=timeout, socket_options=socket_options
            )
        finally:
            os.close(descriptor)

    async def connect_tcp(self, *args: Any, **options: Any) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError(f"{self.socket.label} is reached by its socket only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class SocketTransport(httpx2.AsyncHTTPTransport):
    """HTTP over a sandbox's Unix socket, checked before every request and connected through a
    checked descriptor (see the module's docstring)."""

    def __init__(self, socket: SandboxSocket) -> None:
        # Plain HTTP over the socket: a TLS context is never used, and the default one costs
        # tens of milliseconds to build (it loads the system's certificates), twice a desktop.
        unused_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        super().__init__(uds=str(socket.path), verify=unused_tls)
        self.socket = socket
        # The stock pool, with connections made by the checking backend.
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=unused_tls, uds=str(socket.path), network_backend=_CheckedBackend(socket)
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.socket.check()
        return await super().handle_async_request(request)


class DesktopClient:
    """A connection to one desktop's control server.

    ``base_url`` is the server's URL (``http://127.0.0.1:5000``); ``socket`` makes the client
    reach it through a desktop's Unix socket instead (the URL's host is then ignored), checked
    as the module's docstring says; ``socket_path`` is a socket named by the user (no link
    followed, any owner); ``transport`` replaces the HTTP transport altogether.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:5000",
        *,
        socket: SandboxSocket | None = None,
        socket_path: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        if socket is None and socket_path is not None:
            socket = SandboxSocket(Path(socket_path), None, "the desktop's control socket")
        self.socket = socket
        self.socket_path = socket.path if socket is not None else None
        self.base_url = base_url.rstrip("/") if socket is None else "http://desktop"
        if transport is None:
            transport = SocketTransport(socket) if socket else httpx2.AsyncHTTPTransport()
        self._client = httpx2.AsyncClient(
            base_url=self.base_url, transport=transport, timeout=timeout, trust_env=False
        )
        self.own_server = False
        """Whether the last answer came from this project's control server (its ``Server``
        header), which needs no client-side corrections."""
        self._plain_screenshots = False
        """Set once the server answered a settle request with a plain screenshot."""

    def __repr__(self) -> str:
        where = self.socket_path or self.base_url
        return f"DesktopClient({where})"

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- plumbing --------------------------------------------------------------------------------

    async def _request(
        self, method: str, endpoint: str, *, timeout: float | None = None, **options: Any
    ) -> httpx2.Response:
        if timeout is not None:
            options["timeout"] = timeout
        try:
            response = await self._client.request(method, endpoint, **options)
        except UnsafeSocketError:
            raise  # not a failure of the desktop's server: never retried or waited out
        except httpx2.HTTPError as error:
            raise DesktopControlError(
                f"desktop {self!r}: {method} {endpoint} failed: {type(error).__name__}: {error}"
            ) from error
        self.own_server = response.headers.get("server", "").startswith(OWN_SERVER)
        if response.status_code >= 400:
            reason = _reason(response)
            note = ""
            if response.status_code in (404, 405) and endpoint in _MISSING_ON_OSWORLD:
                note = f" (the server has no {endpoint}: {_MISSING_ON_OSWORLD[endpoint]})"
            elif endpoint == "/cursor_position":
                note = " (OSWorld's own server cannot tell the pointer's position: it answers 500)"
            elif endpoint in ("/execute", "/setup/execute") and any(
                word in reason for word in _WINDOWS_ONLY_FLAG
            ):
                note = (
                    " (this OSWorld server's /execute passes a Windows-only subprocess flag and "
                    "fails on Linux, whatever the command: run the upstream OSWorld server or "
                    "this project's control server in the VM)"
                )
            raise DesktopControlError(
                f"desktop {self!r}: {method} {endpoint} answered {response.status_code}: "
                f"{reason}{note}"
            )
        return response

    async def _json(self, method: str, endpoint: str, **options: Any) -> Any:
        response = await self._request(method, endpoint, **options)
        try:
            return response.json()
        except ValueError:
            raise DesktopControlError(
                f"desktop {self!r}: {endpoint} answered something that is not JSON: "
                f"{response.text[:200]!r}"
            ) from None

    # -- readiness -------------------------------------------------------------------------------

    async def is_up(self) -> bool:
        """Whether the server answers at all (``/screen_size``, which every version has)."""
        try:
            await self._request("POST", "/screen_size", timeout=2.0)
        except DesktopControlError:
            return False
        return True

    async def wait_until_up(self, timeout: float) -> None:
        """Poll until the server answers; ``DesktopControlError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not await self.is_up():
            if time.monotonic() > deadline:
                raise DesktopControlError(f"desktop {self!r} did not answer within {timeout:g} s")
            await asyncio.sleep(0.05)

    # -- observations ----------------------------------------------------------------------------

    async def screenshot(self, image_format: ImageFormat = "png") -> bytes:
        """The screen as PNG bytes (``image_format="pgm"``: raw grey pixels as a binary PGM,
        where the server is this project's; OSWorld's answers a PNG whatever is asked)."""
        params = {"format": image_format} if image_format != "png" else None
        response = await self._request("GET", "/screenshot", params=params)
        return self._image(response, image_format)

    async def settled_screenshot(
        self,
        quiet: float,
        timeout: float,
        image_format: ImageFormat = "png",
        *,
        after_change: bool = False,
    ) -> tuple[bytes, bool] | None:
        """The screen once it stayed unchanged for ``quiet`` seconds (at most ``timeout``
        seconds of waiting), watched by the control server itself, and whether it settled;
        None when the server cannot do that (OSWorld's answers a plain screenshot at once).
        ``image_format``: as for ``screenshot``. ``after_change``: only once something was
        drawn after the server's last such wait; empty bytes when nothing was within
        ``timeout`` (a server of this project's older versions answers the screen anyway)."""
        if not self.own_server and self._plain_screenshots:
            return None
        params = {"settle": f"{quiet:g}", "timeout": f"{timeout:g}"}
        if image_format != "png":
            params["format"] = image_format
        if after_change:
            params["changed"] = "1"
        response = await self._request("GET", "/screenshot", params=params, timeout=timeout + 30.0)
        settled = response.headers.get("x-screen-settled")
        if settled is None:
            self._plain_screenshots = True
            return None
        if response.status_code == 204:
            return b"", False
        return self._image(response, image_format), settled == "1"

    def _image(self, response: httpx2.Response, image_format: ImageFormat) -> bytes:
        """A screenshot answer's image: the format asked for, or a PNG (OSWorld's server)."""
        data = response.content
        if data.startswith(b"\x89PNG") or (image_format == "pgm" and data.startswith(b"P5")):
            return data
        wanted = "a PNG" if image_format == "png" else f"a PNG or {image_format.upper()}"
        raise DesktopControlError(f"desktop {self!r}: /screenshot did not answer {wanted}")

    async def accessibility_tree(self) -> str:
        """The accessibility tree as OSWorld's XML."""
        data = await self._json("GET", "/accessibility")
        if not isinstance(data, dict) or not isinstance(data.get("AT"), str):
            raise DesktopControlError(f"desktop {self!r}: /accessibility answered no 'AT' text")
        if self.own_server:  # ours corrects LibreOffice's positions itself
            return str(data["AT"])
        return await asyncio.to_thread(corrected_tree, str(data["AT"]))

    async def screen_size(self) -> tuple[int, int]:
        """The screen's width and height in pixels."""
        data = await self._json("POST", "/screen_size")
        return int(data["width"]), int(data["height"])

    async def cursor_position(self) -> tuple[int, int]:
        """Where the pointer is."""
        data = await self._json("GET", "/cursor_position")
        if isinstance(data, dict):
            return int(data["x"]), int(data["y"])
        return int(data[0]), int(data[1])

    async def windows(
        self, *, title: str | None = None, timeout: float = 0.0
    ) -> list[tuple[int, str]] | None:
        """The managed windows and their titles; None from servers without ``/windows``
        (OSWorld's). With ``title``, this project's server answers once a window's title holds
        it or after ``timeout`` seconds (an older one answers at once)."""
        params = {"title": title, "timeout": f"{timeout:g}"} if title is not None else None
        try:
            data = await self._json(
                "GET", "/windows", params=params, timeout=timeout + 30.0 if params else None
            )
        except DesktopControlError as error:
            if "answered 404" in str(error):
                return None
            raise
        return [(int(item["id"]), str(item["title"])) for item in data]

    # -- commands --------------------------------------------------------------------------------

    async def execute(
        self, command: str | list[str], *, shell: bool = False, timeout: float = 120.0
    ) -> CommandResult:
        """Run a command inside the desktop and wait for it."""
        data = await self._json(
            "POST",
            "/execute",
            json={"command": command, "shell": shell, "timeout": timeout},
            timeout=timeout + 10,
        )
        return CommandResult.model_validate(data)

    async def run_python(self, code: str, *, timeout: float = 120.0) -> CommandResult:
        """Run Python source inside the desktop (its interpreter, not the runtime's)."""
        data = await self._json(
            "POST", "/run_python", json={"code": code, "timeout": timeout}, timeout=timeout + 10
        )
        return CommandResult(
            status=str(data.get("status", "error")),
            output=str(data.get("output") or ""),
            error=str(data.get("error") or data.get("message") or ""),
            returncode=data.get("return_code", data.get("returncode")),
        )

    async def run_bash_script(
        self, script: str, *, timeout: float = 100.0, working_dir: str | None = None
    ) -> CommandResult:
        """Run a bash script inside the desktop."""
        data = await self._json(
            "POST",
            "/run_bash_script",
            json={"script": script, "timeout": timeout, "working_dir": working_dir},
            timeout=timeout + 10,
        )
        return CommandResult.model_validate(data)

    async def launch(self, command: str | list[str], *, shell: bool = False) -> None:
        """Start a program inside the desktop without waiting for it."""
        await self._request("POST", "/setup/launch", json={"command": command, "shell": shell})

    # -- files and windows -----------------------------------------------------------------------

    async def download_file(self, path: str) -> bytes:
        """The bytes of a file inside the desktop."""
        response = await self._request("POST", "/file", data={"file_path": path})
        return response.content

    async def upload_file(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` inside the desktop (folders are created)."""
        await self._request(
            "POST",
            "/setup/upload",
            data={"file_path": path},
            files={"file_data": (Path(path).name, data)},
        )

    async def open_file(self, path: str, *, timeout: float = 60.0) -> None:
        """Open a file inside the desktop and wait for its window."""
        await self._request(
            "POST",
            "/setup/open_file",
            json={"path": path, "timeout": timeout},
            timeout=timeout + 10,
        )

    async def activate_window(
        self, window_name: str, *, strict: bool = False, by_class: bool = False
    ) -> None:
        """Raise and focus the window whose title (or class) holds ``window_name``."""
        await self._request(
            "POST",
            "/setup/activate_window",
            json={"window_name": window_name, "strict": strict, "by_class": by_class},
        )

    async def close_window(
        self, window_name: str, *, strict: bool = False, by_class: bool = False
    ) -> None:
        """Close the window whose title (or class) holds ``window_name``."""
        await self._request(
            "POST",
            "/setup/close_window",
            json={"window_name": window_name, "strict": strict, "by_class": by_class},
        )


def _reason(response: httpx2.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or data)[:300]
    return str(data)[:300]

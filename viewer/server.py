"""The viewer's HTTP app (Starlette, served by uvicorn on 127.0.0.1 only) and its URL scheme.

Pages (plain HTML and JavaScript from ``viewer/static``; nothing from the network):

- ``/``: the table of judge runs (or of trajectories, for a dataset), filtered, sorted, paged;
  the state is in the query string, so a filtered table can be linked;
- ``/run/<key>``: one judge run (task, trajectory, transcript, verdict, replay report);
  ``#step-<n>`` jumps to step n;
- ``/trajectory/<id>``: one trajectory without a judge run;
- ``/compare?a=<key>&b=<key>``: two judge runs side by side;
- ``/report.html``: the results folder's report; its transcript links (``logs/<key>.jsonl``)
  resolve to ``/logs/<key>.jsonl``, which sends a browser to ``/run/<key>``
  (``/logs/<key>.jsonl?raw=1`` is the file itself).

Data: ``/api/info``, ``/api/runs?...``, ``/api/run/<key>``, ``/api/trajectory/<id>``,
``/api/image/<key>/<event>/<block>`` (an image inside a transcript),
``/files/trajectories/<path>`` (a screenshot), and ``POST /api/corrections``.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dataset.corrections import LabelCorrection, correction_line, read_corrections
from dataset.problems import Problem
from dataset.screenshots import image_mime_type
from storage.confined import UnsafeFileError
from storage.jsonl import JsonlAppender
from viewer.index import FILTERS, RunIndex, RunQuery, open_index
from viewer.pages import RunPages, TooLargeError
from viewer.source import ViewSource

__all__ = ["LOCALHOST", "Viewer", "bind_socket", "build_app", "open_viewer", "serve"]

LOCALHOST = "127.0.0.1"
"""The only address the viewer listens on."""

_STATIC = resources.files("viewer") / "static"


@dataclass
class Viewer:
    """One opened source: its index, run pages and correction file."""

    source: ViewSource
    index: RunIndex
    pages: RunPages
    appender: JsonlAppender
    problems: list[Problem]
    """Lines of the correction file that could not be read."""
    index_seconds: float = 0.0
    """How long opening the index took (reading the cache, or starting the background read)."""


def open_viewer(source: ViewSource, cache_dir: Path | None) -> Viewer:
    """Load (or build and cache) the index and the corrections that stand."""
    started = time.perf_counter()
    index = open_index(source.verdicts, source.dataset, cache_dir)
    problems: list[Problem] = []
    index.corrections = read_corrections(source.corrections, problems)
    viewer = Viewer(
        source=source,
        index=index,
        pages=RunPages(source, index),
        appender=JsonlAppender(source.corrections),
        problems=problems,
    )
    viewer.index_seconds = time.perf_counter() - started
    return viewer


class UnknownSubjectError(Exception):
    """A correction names a trajectory or claim the viewer does not have."""


def _trajectory_or_why(pages: RunPages, request: Request) -> dict[str, Any] | Response:
    """The trajectory page's data, or the answer saying why there is none."""
    try:
        found = pages.trajectory_payload(request.path_params["trajectory_id"])
    except TooLargeError as error:
        return JSONResponse({"error": str(error)}, status_code=413)
    if found is None:
        return JSONResponse({"error": "no such trajectory"}, status_code=404)
    return found


def _current_label(viewer: Viewer, trajectory_id: str, item_id: str | None) -> str | None:
    """The label a correction replaces (corrections included). Raises ``UnknownSubjectError`` when
    nothing here is about that trajectory or claim."""
    for row in viewer.index.runs_of(trajectory_id):
        if row.item_id == item_id:
            return viewer.index.label_of(row)
    loaded = viewer.pages.trajectory(trajectory_id)
    if loaded is None:
        raise UnknownSubjectError(f"no trajectory {trajectory_id!r} here")
    trajectory = loaded[0]
    earlier = viewer.index.corrections.get((trajectory_id, item_id))
    if earlier is not None:
        return earlier.label
    if item_id is None:
        return trajectory.label.value if trajectory.label is not None else None
    for item in trajectory.items:
        if item.id == item_id:
            return item.label
    raise UnknownSubjectError(f"trajectory {trajectory_id!r} has no claim {item_id!r}")


def _page(name: str) -> Callable[[Request], Any]:
    async def handler(_request: Request) -> Response:
        return Response((_STATIC / name).read_bytes(), media_type="text/html; charset=utf-8")

    return handler


def _flag(value: str | None) -> bool:
    return value in ("1", "true", "on", "yes")


def _query(request: Request) -> RunQuery:
    params = request.query_params
    filters = {name: params[name] for name in FILTERS if params.get(name)}
    return RunQuery(
        filters=filters,
        wrong=_flag(params.get("wrong")),
        invalid=_flag(params.get("invalid")),
        search=params.get("q", ""),
        sort=params.get("sort", ""),
        descending=_flag(params.get("desc")),
        offset=int(params.get("offset", "0")),
        limit=int(params.get("limit", "100")),
    )


def build_app(
    viewer: Viewer, allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost")
) -> Starlette:
    """The viewer's routes over one opened source. Requests naming another host are refused
    (a page elsewhere cannot reach the viewer through a rebound DNS name), and corrections must
    be sent as JSON (a cross-site form cannot post one without the browser asking first)."""
    index, pages, source = viewer.index, viewer.pages, viewer.source

    async def info(_request: Request) -> Response:
        return JSONResponse(
            {
                "title": source.title,
                "kind": "results" if source.results is not None else "dataset",
                "results": str(source.results) if source.results else None,
                "dataset": str(source.dataset) if source.dataset else None,
                "replay": str(source.replay) if source.replay else None,
                "corrections_file": str(source.corrections),
                "corrections": len(index.corrections),
                "problems": [str(problem) for problem in viewer.problems],
                "rows": len(index.rows),
                "complete": index.complete,
                "from_cache": index.from_cache,
                "index_seconds": round(viewer.index_seconds, 4),
                "has_report": source.results is not None
                and (source.results / "report.html").is_file(),
                "choices": index.choices(),
            }
        )

    async def runs(request: Request) -> Response:
        try:
            query = _query(request)
            total, page = index.query(query)
        except (ValueError, ValidationError) as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        rows = [
            {
                **row.model_dump(mode="json", exclude={"offset", "length"}),
                "config": row.config,
                "label": index.label_of(row),
                "corrected": (row.trajectory_id, row.item_id) in index.corrections,
                "wrong": index.is_wrong(row),
                "tag": row.wrong_tag if index.is_wrong(row) else None,
            }
            for row in page
        ]
        return JSONResponse(
            {"total": total, "offset": query.offset, "rows": rows, "complete": index.complete}
        )

    async def run(request: Request) -> Response:
        row = index.by_key.get(request.path_params["key"])
        if row is None or row.kind != "judge":
            return JSONResponse({"error": "no such judge run"}, status_code=404)
        payload = await asyncio.to_thread(pages.run_payload, row)
        return JSONResponse(payload)

    async def trajectory(request: Request) -> Response:
        found = await asyncio.to_thread(_trajectory_or_why, pages, request)
        if isinstance(found, Response):
            return found
        found["runs"] = [
            {"key": row.key, "config": row.config, "run": row.run, "verdict": row.verdict}
            for row in index.runs_of(found["id"])
            if row.kind == "judge"
        ]
        return JSONResponse(found)

    async def image(request: Request) -> Response:
        params = request.path_params
        found = await asyncio.to_thread(
            pages.image, params["key"], params["event"], params["block"]
        )
        if found is None:
            return PlainTextResponse("no such image", status_code=404)
        return _image_response(found[0])  # the log's own type is not trusted: the bytes tell

    async def screenshot(request: Request) -> Response:
        path = pages.screenshot(request.path_params["path"])
        if path is None:
            return PlainTextResponse("no such file", status_code=404)
        return _image_response(path)

    async def report(_request: Request) -> Response:
        path = source.results / "report.html" if source.results is not None else None
        if path is None or not path.is_file():
            return PlainTextResponse("no report.html in this results folder", status_code=404)
        return FileResponse(path, media_type="text/html; charset=utf-8")

    async def log(request: Request) -> Response:
        key = request.path_params["key"]
        if _flag(request.query_params.get("raw")):
            path = pages.log_file(key)
            if path is None:
                return PlainTextResponse("no such transcript", status_code=404)
            return FileResponse(path, media_type="application/x-ndjson")
        return RedirectResponse(f"/run/{key}", status_code=302)

    async def correct(request: Request) -> Response:
        if not _same_origin(request):
            return JSONResponse(
                {"error": "corrections are accepted only from the viewer's own pages"},
                status_code=403,
            )
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse(
                {"error": "send the correction as application/json"}, status_code=415
            )
        try:
            body = await request.json()
            trajectory_id = str(body["trajectory_id"])
            item_id = body.get("item_id") or None
            previous = _current_label(viewer, trajectory_id, item_id)
            correction = LabelCorrection(
                trajectory_id=trajectory_id,
                item_id=item_id,
                label=body["label"],
                previous=previous,
                note=str(body.get("note", "")),
                reviewer=str(body.get("reviewer", "")),
                recorded_at=datetime.now(UTC),
            )
        except UnknownSubjectError as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        except (ValueError, KeyError, TypeError, ValidationError) as error:
            return JSONResponse({"error": f"bad correction: {error}"}, status_code=400)
        source.corrections.parent.mkdir(parents=True, exist_ok=True)
        try:
            await viewer.appender.append(correction_line(correction))
        except UnsafeFileError as error:  # a link planted in place of the corrections file
            return JSONResponse({"error": str(error)}, status_code=409)
        index.corrections[correction.key] = correction
        return JSONResponse(
            {"written": str(source.corrections), "correction": correction.model_dump(mode="json")}
        )

    routes = [
        Route("/", _page("index.html")),
        Route("/run/{key}", _page("run.html")),
        Route("/trajectory/{trajectory_id}", _page("run.html")),
        Route("/compare", _page("compare.html")),
        Route("/report.html", report),
        Route("/logs/{key}.jsonl", log),
        Route("/api/info", info),
        Route("/api/runs", runs),
        Route("/api/run/{key}", run),
        Route("/api/trajectory/{trajectory_id}", trajectory),
        Route("/api/image/{key}/{event:int}/{block:int}", image),
        Route("/api/corrections", correct, methods=["POST"]),
        Route("/files/trajectories/{path:path}", screenshot),
        Mount("/static", app=StaticFiles(directory=str(_STATIC))),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)),
            Middleware(SecurityHeaders),
        ],
    )


NOT_AN_IMAGE = "not a PNG, JPEG, GIF, WebP or BMP image; the viewer serves no other file type"

PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
"""The viewer's own pages: scripts and styles from ``/static`` only, nothing from elsewhere."""

DATA_POLICY = (
    "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; "
    "frame-ancestors 'self'"
)
"""What comes from the results folder or dataset (screenshots, transcript images, raw logs,
``report.html``): rendered in a sandbox (an origin of its own, no scripts), so even a file that
got through as HTML could not read ``/api`` or post a correction."""

_DATA_PREFIXES = ("/files/", "/api/image/", "/logs/", "/report.html")


def inert_image_type(head: bytes) -> str | None:
    """The MIME type of a raster image from its first bytes; None for anything else (SVG and
    HTML included, whatever their name or declared type says)."""
    mime_type = image_mime_type(head, Path("x"))
    return mime_type if mime_type.startswith("image/") else None


def _image_response(image: bytes | Path) -> Response:
    """``image`` (bytes, or a file) as the raster image its first bytes say it is, or 415."""
    if isinstance(image, Path):
        with image.open("rb") as stream:
            mime_type = inert_image_type(stream.read(16))
    else:
        mime_type = inert_image_type(image[:16])
    if mime_type is None:
        return PlainTextResponse(NOT_AN_IMAGE, status_code=415)
    cache = {"Cache-Control": "max-age=3600"}
    if isinstance(image, Path):
        return FileResponse(image, media_type=mime_type, headers=cache)
    return Response(image, media_type=mime_type, headers=cache)


def _same_origin(request: Request) -> bool:
    """Whether a write comes from the viewer's own pages: a browser names the page's origin
    (``Origin``, ``Sec-Fetch-Site``); a sandboxed page's origin is ``null`` and is refused."""
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin is not None and origin != own:
        return False
    return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


class SecurityHeaders:
    """Adds ``nosniff`` and a Content-Security-Policy to every answer (``DATA_POLICY`` for data
    from the results folder, ``PAGE_POLICY`` for the rest)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        policy = DATA_POLICY if path.startswith(_DATA_PREFIXES) else PAGE_POLICY

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Content-Security-Policy"] = policy
                headers["Referrer-Policy"] = "no-referrer"
                headers["Cross-Origin-Resource-Policy"] = "same-origin"
            await send(message)

        await self.app(scope, receive, with_headers)


def bind_socket(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: one the system picks)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOCALHOST, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def serve(app: Starlette, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until cancelled (Ctrl-C)."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()

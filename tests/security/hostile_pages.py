"""Hostile pages for the browser and phone tests: a page folder archive written on the fly, a
phone app folder, and a UDP witness on loopback."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from types import TracebackType

BASE = "https://hostile.example"
CALM = f"{BASE}/calm"
HANG = f"{BASE}/hang"
KEY_HANG = f"{BASE}/key-hang"
TABS = f"{BASE}/tabs"
HEAP = f"{BASE}/heap"
BUFFERS = f"{BASE}/buffers"
HOLD = "https://calm.example/hold"
BUFFERS_ON_CUE = f"{BASE}/buffers-on-cue"

GROW_BUFFERS = (
    "const kept = []; async function grow() { for (let i = 0; i < 96; i++) { "
    "kept.push(new Uint8Array(64 * 2 ** 20).fill(7)); document.title = 'held ' + kept.length; "
    "await new Promise(r => setTimeout(r, 0)); } }"
)
"""A page script defining ``grow``: 6 GiB of array buffers, 64 MiB at a time, yielding between."""

START_GROWING = "() => { setTimeout(grow, 0); }"
"""What a test evaluates in a ``BUFFERS_ON_CUE`` page to start its allocations."""


def _page(title: str, body: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


PAGES = {
    CALM: _page("Calm", "<h1>A calm page</h1><p>Population: 1,204</p>"),
    # The script starts once the page has loaded, so the navigation itself completes.
    HANG: _page(
        "Hang",
        "<p>spinning</p><script>setTimeout(() => { while (true) {} }, 50)</script>",
    ),
    KEY_HANG: _page(
        "Key hang",
        "<p>press a key</p><script>addEventListener('keydown', () => { while (true) {} })</script>",
    ),
    TABS: _page(
        "Tabs",
        "<p>opening</p><script>for (let i = 0; i < 150; i++) window.open('/calm?' + i)</script>",
    ),
    # Ordinary objects: V8's heap, past the renderer's script heap cap. Allocated in steps that
    # yield, so the page keeps answering until its limit ends it.
    HEAP: _page(
        "Heap",
        "<script>const kept = []; async function grow() { for (let i = 0; ; i++) { "
        "kept.push(new Array(2 ** 20).fill(i + 0.5)); "
        "await new Promise(r => setTimeout(r, 0)); } } "
        "setTimeout(grow, 50)</script>",
    ),
    # Array buffers: memory outside V8's heap, 6 GiB of it, every page touched.
    BUFFERS: _page("Buffers", f"<script>{GROW_BUFFERS} setTimeout(grow, 50)</script>"),
    BUFFERS_ON_CUE: _page("Buffers", f"<script>{GROW_BUFFERS}</script>"),
    # An ordinary heavy page on another site: 1 GiB of array buffers, kept, then it settles.
    HOLD: _page(
        "Hold",
        "<script>const kept = []; async function grow() { for (let i = 0; i < 16; i++) { "
        "kept.push(new Uint8Array(64 * 2 ** 20).fill(3)); "
        "await new Promise(r => setTimeout(r, 0)); } document.title = 'held ' + kept.length; } "
        "setTimeout(grow, 50)</script><p>Population: 1,204</p>",
    ),
}


def write_hostile_site(folder: Path) -> Path:
    """The hostile pages as a page-folder archive (every address under ``/calm`` is the calm
    page); returns the folder."""
    (folder / "files").mkdir(parents=True, exist_ok=True)
    pages = []
    urls = dict(PAGES)
    urls.update({f"{CALM}?{i}": PAGES[CALM] for i in range(150)})
    for number, (url, html) in enumerate(urls.items()):
        name = f"files/page{number}.html"
        (folder / name).write_text(html, encoding="utf-8")
        pages.append({"url": url, "file": name, "content_type": "text/html; charset=utf-8"})
    index = {"format": "agentjudge-page-archive", "version": 1, "pages": pages}
    (folder / "pages.json").write_text(json.dumps(index), encoding="utf-8")
    return folder


def webrtc_script(port: int) -> str:
    """A page script that gathers ICE candidates against a STUN server on 127.0.0.1:``port``
    (a STUN binding request is a UDP datagram to that port) and reports when gathering ends."""
    return (
        "async () => { const pc = new RTCPeerConnection({iceServers: "
        f"[{{urls: 'stun:127.0.0.1:{port}'}}, {{urls: 'turn:127.0.0.1:{port}?transport=udp', "
        "username: 'u', credential: 'p'}]}); pc.createDataChannel('leak');"
        " const done = new Promise(r => { pc.onicegatheringstatechange = () => "
        "{ if (pc.iceGatheringState === 'complete') r(); }; setTimeout(r, 4000); });"
        " await pc.setLocalDescription(await pc.createOffer()); await done;"
        " const sdp = pc.localDescription ? pc.localDescription.sdp : ''; pc.close();"
        " return sdp; }"
    )


class UdpWitness:
    """A UDP socket on 127.0.0.1 that counts every datagram it receives."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.1)
        self.port: int = self._socket.getsockname()[1]
        self.datagrams = 0
        self._running = True
        self._thread = threading.Thread(target=self._receive, daemon=True)

    def _receive(self) -> None:
        while self._running:
            try:
                self._socket.recvfrom(4096)
            except OSError:
                continue
            self.datagrams += 1

    def __enter__(self) -> UdpWitness:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._running = False
        self._thread.join()
        self._socket.close()


def write_phone_app(apps: Path) -> Path:
    """A phone with one app (``probe``) at ``apps``; returns the folder."""
    (apps / "probe").mkdir(parents=True, exist_ok=True)
    (apps / "probe" / "index.html").write_text(
        _page("Probe", "<h1 id='title'>Probe</h1>"), encoding="utf-8"
    )
    return apps


PHONE_TABS = _page(
    "Tabs",
    "<p>opening</p><script>for (let i = 0; i < 150; i++) window.open('/calm.html?' + i)</script>",
)
"""A phone app page opening 150 windows."""


def write_hostile_phone_apps(apps: Path) -> Path:
    """A phone with the hostile pages as apps: ``buffers`` (6 GiB of array buffers once cued,
    as ``BUFFERS_ON_CUE``), ``hold`` (an ordinary heavy app holding 1 GiB, as ``HOLD``) and
    ``tabs`` (150 windows); returns the folder."""
    for app_id, html in (
        ("buffers", PAGES[BUFFERS_ON_CUE]),
        ("hold", PAGES[HOLD]),
        ("tabs", PHONE_TABS),
    ):
        (apps / app_id).mkdir(parents=True, exist_ok=True)
        (apps / app_id / "index.html").write_text(html, encoding="utf-8")
        (apps / app_id / "calm.html").write_text(PAGES[CALM], encoding="utf-8")
    return apps

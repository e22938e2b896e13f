"""Chromium launched by a runtime that is not root (``sandboxes/chromium.py``'s unprivileged
path: bubblewrap makes a user namespace of its own): run for real as a throwaway uid with a
home it owns, the walls hold as they do under root: Chromium's own sandbox on (renderers under
seccomp-bpf in a user namespace the browser is not in, no capabilities), no ``--no-sandbox``,
and offline a network namespace holding only a loopback, so a page's WebRTC sends no datagram
to a witness on the host's loopback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.hostile_pages import UdpWitness

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[2]

THROWAWAY_UID = 61_234
"""A uid no account or process uses here: the runtime's user for this test."""

CHILD = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path

    from sandboxes.browser.archive import load_archive
    from sandboxes.browser.sandbox import BrowserProvider
    from tests.security.hostile_pages import CALM, webrtc_script, write_hostile_site
    from tests.security.test_chromium_walls import _check_sandboxed, _chromium_tree

    async def main() -> None:
        assert os.geteuid() != 0
        archive = load_archive(write_hostile_site(Path(os.environ["HOME"]) / "site"))
        async with BrowserProvider(keep_spare=False) as provider:
            sandbox = await provider.open(archive, [CALM])
            assert await sandbox.session.page.title() == "Calm"
            pids = (await provider.browser()).pids
            _check_sandboxed(pids)
            links = set()
            for process in _chromium_tree(pids):
                for line in Path(f"/proc/{process.pid}/net/dev").read_text().splitlines()[2:]:
                    links.add(line.split(":")[0].strip())
            sdp = await sandbox.session.page.evaluate(webrtc_script(int(sys.argv[1])))
            await asyncio.sleep(1)
            print(json.dumps({"links": sorted(links), "srflx": "typ srflx" in sdp}))

    asyncio.run(main())
    """
)


@pytest.fixture
def throwaway_home() -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("switching to a throwaway uid needs root and setpriv")
    home = Path(tempfile.mkdtemp(prefix="aj-unprivileged-", dir="/tmp"))
    os.chown(home, THROWAWAY_UID, THROWAWAY_UID)
    home.chmod(0o700)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_an_unprivileged_runtime_keeps_chromiums_walls(throwaway_home: Path) -> None:
    # The test's interpreter may live where the throwaway user cannot reach (root's home):
    # the system's Python runs the runtime with the same packages.
    site = next(path for path in sys.path if path.endswith("site-packages"))
    python = "/usr/bin/python3"
    script = throwaway_home / "child.py"
    script.write_text(CHILD)
    os.chown(script, THROWAWAY_UID, THROWAWAY_UID)
    environment = {
        "HOME": str(throwaway_home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": f"{REPOSITORY}:{site}",
        "AGENTJUDGE_WORKDIR": str(throwaway_home / "work"),
        "TMPDIR": str(throwaway_home),
    }
    with UdpWitness() as witness:
        done = subprocess.run(
            [
                "setpriv",
                f"--reuid={THROWAWAY_UID}",
                f"--regid={THROWAWAY_UID}",
                "--clear-groups",
                "--inh-caps=-all",
                python,
                str(script),
                str(witness.port),
            ],
            env=environment,
            cwd=throwaway_home,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        datagrams = witness.datagrams
    assert done.returncode == 0, done.stderr[-3000:]
    found = done.stdout.strip().splitlines()[-1]
    assert found == '{"links": ["lo"], "srflx": false}', done.stdout
    assert datagrams == 0

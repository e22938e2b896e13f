"""Desktop tests: the desktop image of the docker backend (built on first use), a bare Xvfb
display, and a desktop that answers over TCP as an OSWorld VM would."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def desktop_image() -> str:
    """The desktop image's tag (a few minutes to build the first time, then cached)."""
    from sandboxes.desktop.image import build_desktop_image

    return build_desktop_image()


SERVER_COMMAND = [
    *("python3", "-m", "control_server", "session", "--host", "0.0.0.0", "--port", "5000"),
    *("--display", ":0", "--profile", "/home/user/.office-profile"),
]
"""The control server on TCP inside the container (published on 127.0.0.1 only)."""


@pytest.fixture
def remote_desktop(desktop_image: str) -> Iterator[str]:
    """A desktop whose control server answers over TCP on 127.0.0.1; its URL."""
    import docker
    from docker.types import Mount

    from sandboxes.desktop.docker import CONTROL_SERVER_SOURCE, MOUNT_ROOT
    from sandboxes.docker.containers import remove_container
    from sandboxes.docker.leftovers import run_labels
    from sandboxes.runs import current_run

    engine = docker.from_env()
    ports: dict[str, Any] = {"5000/tcp": ("127.0.0.1", None)}  # any free port, loopback only
    container = engine.containers.run(
        desktop_image,
        command=SERVER_COMMAND,
        name=current_run().new_name("osworldvm"),
        user="1000:1000",
        working_dir="/home/user",
        environment={"PYTHONPATH": MOUNT_ROOT, "PYTHONDONTWRITEBYTECODE": "1"},
        labels=run_labels("desktop"),
        mounts=[
            Mount(
                f"{MOUNT_ROOT}/control_server",
                str(CONTROL_SERVER_SOURCE),
                type="bind",
                read_only=True,
            )
        ],
        ports=ports,
        mem_limit=2 * 2**30,
        detach=True,
    )
    try:
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["5000/tcp"][0]["HostPort"]
        yield f"http://127.0.0.1:{port}"
    finally:
        remove_container(container)
        engine.close()


@pytest.fixture(scope="module")
def bare_display() -> Iterator[str]:
    """An Xvfb display of its own, nothing on it (the X server picks a free number): its name."""
    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is installed by .ci/run for desktop tests")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "800x600x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as announced:
            number = announced.readline().strip()
        assert number, "Xvfb announced no display"
        yield f":{number}"
    finally:
        server.kill()
        server.wait(timeout=10)

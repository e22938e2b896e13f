"""Installing a missing system program with apt, the way a fresh machine needs it.

The runtime needs a few Debian programs (``debootstrap`` to build the Docker images,
``bubblewrap`` to box dataset code). When one is missing and this process is root on a machine
with ``apt-get``, it is installed (refreshing stale package lists once); otherwise the caller
prints one line saying how. Nothing is ever removed.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess

__all__ = ["APT_TIMEOUT", "can_install", "install_with_apt"]

logger = logging.getLogger(__name__)

APT_TIMEOUT = 600.0
"""Seconds one ``apt-get`` call may take."""


def _apt_get(*arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", *arguments]
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=environment,
            timeout=APT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess(command, 1, "", str(error))


def can_install() -> bool:
    """Whether this process may install packages itself: root, with ``apt-get`` on PATH."""
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def install_with_apt(package: str, program: str) -> str | None:
    """Install ``package`` with apt so that ``program`` is on PATH; None when it is, else why
    not (the last line apt printed). Call only when ``can_install()``."""
    logger.warning("%s is not installed: installing the %s package with apt-get", program, package)
    done = _apt_get("install", "-y", "-qq", package)
    if done.returncode != 0:  # stale or missing package lists: refresh them once
        _apt_get("update", "-qq")
        done = _apt_get("install", "-y", "-qq", package)
    if done.returncode == 0 and shutil.which(program) is not None:
        return None
    lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
    if done.returncode == 0:
        return f"apt-get install {package} did not put {program} on PATH"
    return f"apt-get install {package} failed: {lines[-1] if lines else 'no output'}"

"""The Python packages a desktop's own interpreter needs beyond Debian's: pyautogui.

Recorded pyautogui code runs inside the desktop with its system ``python3`` (which has Debian's
``python3-xlib``, ``python3-pil`` and ``python3-tk``). Debian does not package pyautogui, so its
pure-Python packages are installed once, from PyPI, into a folder of their own (``pip install
--target``, without dependencies: the compiled ones come from Debian), cached by version under
``~/.cache/agentjudge`` and shown read-only to every local desktop on ``PYTHONPATH``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
from pathlib import Path

from sandboxes.base import SandboxError

PACKAGES = (
    "pyautogui==0.9.54",
    "pymsgbox==2.0.1",
    "pytweening==1.2.0",
    "pyscreeze==1.0.1",
    "pygetwindow==0.0.9",
    "pyrect==0.2.0",
    "mouseinfo==0.1.3",
    "pyperclip==1.11.0",
)
"""pyautogui and its pure-Python dependencies, pinned (the desktop supplies Xlib and Pillow)."""

CACHE_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentjudge"
"""Where the package folder is cached."""

_lock = asyncio.Lock()


def packages_folder() -> Path:
    """The cached folder for this version of ``PACKAGES`` (it may not exist yet)."""
    digest = hashlib.sha256("\n".join(PACKAGES).encode()).hexdigest()[:12]
    return CACHE_ROOT / f"desktop-python-{digest}"


async def ensure_desktop_packages() -> Path:
    """The folder holding pyautogui for desktops, installed from PyPI on first use."""
    folder = packages_folder()
    if (folder / "pyautogui").is_dir():
        return folder
    async with _lock:
        if (folder / "pyautogui").is_dir():
            return folder
        staging = folder.with_name(folder.name + f".tmp{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
            "--disable-pip-version-check", "--target", str(staging), *PACKAGES,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            output, _ = await asyncio.wait_for(process.communicate(), 600)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise SandboxError("installing pyautogui for desktops took over 600 s") from None
        if process.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise SandboxError(
                "could not install pyautogui for desktops (pip install --target): "
                + output.decode(errors="replace")[-800:]
            )
        for root, folders, files in os.walk(staging):
            os.chmod(root, 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)
            del folders  # walked by os.walk itself
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(staging, folder)
        except OSError:  # another process installed it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
            if not (folder / "pyautogui").is_dir():
                raise
        return folder

"""The desktop image: built locally, tagged by its recipe, holding what desktops need."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

import docker
import pytest

from sandboxes.base import SandboxError
from sandboxes.desktop import image
from sandboxes.desktop.docker import _make_seed
from sandboxes.desktop.sandbox import DocumentFile
from sandboxes.docker.rootfs import IMAGE_LABEL


def test_a_document_goes_into_the_home_seed_readable_and_confined(tmp_path: Path) -> None:
    data = b"PK fake office file"
    seed = tmp_path / "seed"
    _make_seed(seed, DocumentFile(PurePosixPath("Desktop/q3/r.docx"), data))
    written = seed / "Desktop" / "q3" / "r.docx"
    assert written.read_bytes() == data
    assert written.stat().st_mode & 0o777 == 0o644
    outside = tmp_path / "seed-escape"
    with pytest.raises(SandboxError, match=r"\.\."):
        _make_seed(outside, DocumentFile(PurePosixPath("../x.docx"), data))
    assert not (tmp_path / "x.docx").exists()


def test_the_recipe_hash_follows_the_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    before = image.recipe_hash()
    assert image.desktop_image_tag() == f"{image.REPOSITORY}:{before}"
    monkeypatch.setattr(image, "PACKAGES", (*image.PACKAGES, "gnumeric"))
    assert image.recipe_hash() != before


def _run(tag: str, script: str) -> str:
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--user",
            "1000:1000",
            tag,
            "sh",
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.docker
def test_the_image_is_labelled_and_holds_the_desktop(desktop_image: str) -> None:
    assert desktop_image == image.desktop_image_tag()
    engine = docker.from_env()
    try:
        labels = engine.images.get(desktop_image).labels
    finally:
        engine.close()
    assert labels[IMAGE_LABEL] == "desktop"
    assert labels["agentjudge.recipe"] == image.recipe_hash()
    assert image.desktop_image_size(desktop_image) < 1.5 * 2**30
    lines = _run(
        desktop_image,
        "id -un; echo $HOME; soffice --version; "
        "python3 -c 'import gi, pyatspi, Xlib, PIL, lxml, tkinter, importlib.util as u;"
        ' print(all(u.find_spec(m) for m in ("pyautogui", "pymsgbox", "pyscreeze")))\'; '
        "ls /usr/lib/libreoffice/program | grep -c vclplug_gtk3; "
        f"grep -c ShowTipOfTheDay {image.OFFICE_PROFILE}/user/registrymodifications.xcu; "
        "for p in Xvfb openbox dbus-daemon wmctrl xdotool; do command -v $p; done | wc -l",
    ).split()
    assert lines[0:2] == [image.USER, image.HOME]
    # The series the profile is written for, and the host's (bookworm's 7.4): local and
    # container desktops draw the same screens only with the same LibreOffice.
    assert lines[2] == "LibreOffice"
    assert lines[3].startswith(f"{image.OFFICE_VERSION}.")
    assert lines[-4:] == ["True", "1", "1", "5"]


@pytest.mark.docker
def test_the_font_caches_hold_for_the_desktops_user(desktop_image: str) -> None:
    # The image's font caches match its folders' times to the nanosecond, so a program that
    # lists fonts reads them and scans no font files; a mismatch would have it write caches of
    # its own, in a home that starts empty in every desktop.
    listed = _run(
        desktop_image,
        'export HOME=$(mktemp -d); fc-list | wc -l; ls -A "$HOME/.cache/fontconfig" 2>/dev/null'
        " | wc -l",
    ).split()
    assert int(listed[0]) > 50
    assert listed[1] == "0"

"""A fresh machine without bubblewrap: as root with apt the runtime installs it itself (as it does
debootstrap), otherwise one line says how. PATH holds only stand-in programs: the real apt-get is
never reachable, so nothing is installed or removed for real."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandboxes import confinement
from sandboxes.confinement import BUBBLEWRAP_HINT, ConfinementError, require_bubblewrap


def _program(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with ``sh``, ``chmod`` and ``setpriv`` only (no bwrap, no apt-get)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("sh", "chmod", "setpriv"):
        found = shutil.which(tool)
        assert found is not None, tool
        (folder / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(folder))
    assert shutil.which("bwrap") is None
    assert shutil.which("apt-get") is None
    return folder


def _as_user(monkeypatch: pytest.MonkeyPatch, uid: int) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: uid)


def _fake_apt(folder: Path, *, works: bool = True) -> Path:
    """An ``apt-get`` that logs its arguments; ``install`` puts a stand-in bwrap beside it."""
    log = folder / "apt.log"
    install = f'printf "#!/bin/sh\\nexit 0\\n" > "{folder}/bwrap"; chmod 755 "{folder}/bwrap"'
    if not works:
        install = "echo 'E: Unable to locate package bubblewrap' >&2; exit 100"
    _program(
        folder,
        "apt-get",
        f'echo "$@" >> "{log}"\nif [ "$1" = install ]; then {install}; fi\nexit 0',
    )
    return log


def test_root_with_apt_installs_bubblewrap(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_apt(bare_path)
    _as_user(monkeypatch, 0)
    assert require_bubblewrap() == str(bare_path / "bwrap")
    assert log.read_text().splitlines() == ["install -y -qq bubblewrap"]
    assert require_bubblewrap() == str(bare_path / "bwrap")  # installed once
    assert len(log.read_text().splitlines()) == 1


def test_a_user_is_told_in_one_line_how_to_get_it(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_apt(bare_path)  # there, but a user cannot install with it
    _as_user(monkeypatch, 1000)
    with pytest.raises(ConfinementError) as raised:
        require_bubblewrap()
    message = str(raised.value)
    assert message == BUBBLEWRAP_HINT
    assert "\n" not in message
    assert "apt-get install bubblewrap" in message
    assert not log.exists()


def test_root_without_apt_gets_the_hint(bare_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _as_user(monkeypatch, 0)
    with pytest.raises(ConfinementError) as raised:
        require_bubblewrap()
    assert str(raised.value) == BUBBLEWRAP_HINT


def test_a_failed_install_refreshes_once_then_says_why(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_apt(bare_path, works=False)
    _as_user(monkeypatch, 0)
    with pytest.raises(ConfinementError) as raised:
        require_bubblewrap()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(BUBBLEWRAP_HINT)
    assert message.endswith(
        "(apt-get install bubblewrap failed: E: Unable to locate package bubblewrap)"
    )
    assert log.read_text().splitlines() == [
        "install -y -qq bubblewrap",
        "update -qq",
        "install -y -qq bubblewrap",
    ]


def test_an_installed_bubblewrap_is_used_without_apt(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_apt(bare_path)
    _program(bare_path, "bwrap", "exit 0")
    _as_user(monkeypatch, 0)
    assert confinement.require_bubblewrap() == str(bare_path / "bwrap")
    assert not log.exists()

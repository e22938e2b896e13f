"""Before the image build: debootstrap is there (or installed with apt as root), else one line
saying how to get it. No Docker engine needed: PATH holds only stand-in programs."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import docker.errors
import pytest

from agentjudge import cli
from sandboxes.base import SandboxError
from sandboxes.docker import rootfs
from sandboxes.runs import WORKDIR_ENV

REPOSITORY = Path(__file__).resolve().parents[3]
MINI = REPOSITORY / "datasets" / "examples" / "mini"


def _program(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with nothing but ``sh`` and ``chmod`` (and what a test puts there)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("sh", "chmod"):
        found = shutil.which(tool)
        assert found is not None
        (folder / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(folder))
    return folder


def _as_user(monkeypatch: pytest.MonkeyPatch, uid: int, scratch: Path | None = None) -> None:
    """Pretend to run as ``uid``; with ``scratch``, give that user a scratch space of its own
    (the runtime refuses one another user owns)."""
    monkeypatch.setattr(os, "geteuid", lambda: uid)
    if scratch is not None:
        scratch.mkdir(mode=0o700)
        os.chown(scratch, uid, -1)
        monkeypatch.setenv(WORKDIR_ENV, str(scratch))


def _fake_apt(folder: Path, *, install_works_after_update: bool = False) -> Path:
    """An ``apt-get`` that logs its arguments and installs a stand-in debootstrap beside itself
    (only after an ``update`` when asked)."""
    log = folder / "apt.log"
    condition = f'[ -f "{folder}/updated" ]' if install_works_after_update else "true"
    _program(
        folder,
        "apt-get",
        f'echo "$*" >> "{log}"\n'
        f'case "$1" in\n'
        f'  update) : > "{folder}/updated" ;;\n'
        f"  install) if {condition}; then\n"
        f'      printf "#!/bin/sh\\n" > "{folder}/debootstrap"; chmod +x "{folder}/debootstrap"\n'
        f"    else echo 'E: Unable to locate package debootstrap' >&2; exit 100; fi ;;\n"
        f"esac",
    )
    return log


def test_without_debootstrap_a_user_is_told_in_one_line_how_to_get_it(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _as_user(monkeypatch, 1000)
    with pytest.raises(SandboxError) as raised:
        rootfs.require_debootstrap()
    message = str(raised.value)
    assert "\n" not in message
    assert "`apt-get install debootstrap`" in message
    assert "not installed" in message


def test_with_debootstrap_but_without_root_the_user_is_told_to_build_as_root(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(bare_path, "debootstrap", "exit 0")
    _as_user(monkeypatch, 1000)
    with pytest.raises(SandboxError, match=r"needs root: run `make images` as root once"):
        rootfs.require_debootstrap()


def test_root_with_debootstrap_goes_ahead(bare_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _program(bare_path, "debootstrap", "exit 0")
    _program(bare_path, "apt-get", "exit 99")  # never needed
    _as_user(monkeypatch, 0)
    rootfs.require_debootstrap()


def test_root_without_apt_gets_the_hint(bare_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _as_user(monkeypatch, 0)
    with pytest.raises(SandboxError) as raised:
        rootfs.require_debootstrap()
    assert str(raised.value) == rootfs.DEBOOTSTRAP_HINT


def test_root_with_apt_installs_debootstrap(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_apt(bare_path)
    _as_user(monkeypatch, 0)
    rootfs.require_debootstrap()
    assert log.read_text().splitlines() == ["install -y -qq debootstrap"]
    assert shutil.which("debootstrap") == str(bare_path / "debootstrap")


def test_stale_package_lists_are_refreshed_once(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_apt(bare_path, install_works_after_update=True)
    _as_user(monkeypatch, 0)
    rootfs.require_debootstrap()
    assert log.read_text().splitlines() == [
        "install -y -qq debootstrap",
        "update -qq",
        "install -y -qq debootstrap",
    ]


def test_a_failed_install_says_why_with_the_hint(
    bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(bare_path, "apt-get", "echo 'E: Unable to locate package debootstrap' >&2; exit 100")
    _as_user(monkeypatch, 0)
    with pytest.raises(SandboxError) as raised:
        rootfs.require_debootstrap()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(rootfs.DEBOOTSTRAP_HINT)
    assert message.endswith(
        "(apt-get install debootstrap failed: E: Unable to locate package debootstrap)"
    )


class _NoImages:
    """A Docker client on which the sandbox image does not exist yet."""

    class images:  # noqa: N801 (the docker client's attribute name)
        @staticmethod
        def get(tag: str) -> object:
            raise docker.errors.ImageNotFound(tag)

    def close(self) -> None:
        pass


def test_replay_on_docker_without_debootstrap_stops_with_one_line_before_any_replay(
    bare_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no cached root filesystem
    monkeypatch.setattr(rootfs, "docker_client", lambda timeout=120: _NoImages())

    def no_download(recipe: rootfs.RootfsRecipe, mirror: str) -> Path:
        raise AssertionError("the build must not start")

    monkeypatch.setattr(rootfs, "download_packages", no_download)
    _as_user(monkeypatch, 1000, tmp_path / "scratch")
    output = tmp_path / "reports"
    monkeypatch.setattr(
        sys,
        "argv",
        ["agentjudge", "replay", str(MINI), "--backend", "docker", "--output", str(output)],
    )
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 2
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[0].startswith("Replaying ")
    # Between the header and the error only notes of what starts (no replay line).
    assert all(not line.startswith("  ") for line in printed[1:-1]), printed
    assert printed[-1].startswith("error: the Docker images are built with debootstrap")
    assert "`apt-get install debootstrap`" in printed[-1]
    assert not (output / "fidelity.jsonl").exists() or not (output / "fidelity.jsonl").read_text()

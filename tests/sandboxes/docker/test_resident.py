"""The resident helper, run here on the host against temporary folders (no Docker needed): its
framing, its answers to good and bad requests, tree archives with exact times, and snapshots
attached read-only or copied on the first write."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxes.base import SandboxError
from sandboxes.docker.resident.archive import UnsafeMemberError, unpack_tree, write_tree
from sandboxes.docker.resident.protocol import CHUNK_BYTES
from sandboxes.docker.resident_link import ResidentError, ResidentLink

HELPER_PARENT = Path(__file__).resolve().parents[3] / "sandboxes" / "docker"
ODD_NS = 1_600_000_000_123_456_789


class Helper:
    def __init__(self, base: Path) -> None:
        self.root = base / "sandbox"  # in a container: a tmpfs, empty at start
        self.snapshots = base / "snapshots"
        self.root.mkdir(parents=True)
        self.snapshots.mkdir()
        self.socket = base / "resident.sock"
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "resident", "--socket", str(self.socket),
                "--root", str(self.root), "--snapshots", str(self.snapshots),
            ],
            env={**os.environ, "PYTHONPATH": str(HELPER_PARENT)},
        )  # fmt: skip
        self.link = ResidentLink(self.socket, "test-helper", timeout=30)
        self.link.wait_ready(30)

    def close(self) -> None:
        self.link.close()
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def helper(tmp_path: Path) -> Iterator[Helper]:
    made = Helper(tmp_path / "helper")
    yield made
    made.close()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    tree = tmp_path / "source"
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "a.txt").write_text("alpha\n")
    os.link(tree / "docs" / "a.txt", tree / "same.txt")
    (tree / "link").symlink_to("docs/a.txt")
    (tree / "secret").write_bytes(b"k")
    (tree / "secret").chmod(0o600)
    for path in [*tree.rglob("*"), tree]:
        os.utime(path, ns=(ODD_NS, ODD_NS), follow_symlinks=False)
    return tree


def archive_of(folder: Path | None) -> bytes:
    buffer = io.BytesIO()
    write_tree(None if folder is None else str(folder), buffer, "sandbox", now_ns=ODD_NS)
    return buffer.getvalue()


def test_an_unpacked_tree_keeps_exact_times_modes_and_links(helper: Helper, source: Path) -> None:
    helper.link.call("unpack", payload=archive_of(source))
    assert (helper.root / "docs" / "a.txt").read_text() == "alpha\n"
    assert (helper.root / "docs" / "a.txt").stat().st_ino == (
        helper.root / "same.txt"
    ).stat().st_ino
    assert os.readlink(helper.root / "link") == "docs/a.txt"
    assert (helper.root / "secret").stat().st_mode & 0o777 == 0o600
    for path in [*helper.root.rglob("*"), helper.root]:
        assert path.lstat().st_mtime_ns == ODD_NS, path
    records, _ = helper.link.call("everything")
    assert {record[-1]: record[3] for record in records}[""] == ODD_NS
    # A tree is unpacked once.
    with pytest.raises(ResidentError, match="EEXIST"):
        helper.link.call("unpack", payload=archive_of(None))


def test_packing_round_trips_the_tree(helper: Helper, source: Path, tmp_path: Path) -> None:
    helper.link.call("unpack", payload=archive_of(source))
    sink = io.BytesIO()
    helper.link.call("pack", sink=sink)
    sink.seek(0)
    (tmp_path / "out").mkdir()
    unpack_tree(sink, str(tmp_path / "out"))
    copy = tmp_path / "out" / "sandbox"
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == sorted(
        p.relative_to(source) for p in source.rglob("*")
    )
    assert (copy / "same.txt").stat().st_ino == (copy / "docs" / "a.txt").stat().st_ino
    assert (copy / "docs").stat().st_mtime_ns == ODD_NS


def test_failures_are_answered_and_the_connection_stays_usable(
    helper: Helper, source: Path
) -> None:
    helper.link.call("unpack", payload=archive_of(source))
    cases: list[tuple[tuple[Any, ...], str]] = [
        (("read", "missing.txt"), "ENOENT"),
        (("read", "docs/a.txt/x"), "ENOTDIR"),
        (("read", "docs"), "EISDIR"),
        (("read", "../outside"), "ESCAPE"),
        (("stat", "/etc/passwd"), "ESCAPE"),
        (("move", "docs", "docs/inner"), "EINVAL"),
        (("mkdir", "a/b/c", 2), "EDQUOT"),
        (("no-such-operation",), "EINVAL"),
        (("stat",), "EINVAL"),  # a missing argument
    ]
    for (operation, *arguments), code in cases:
        with pytest.raises(ResidentError) as raised:
            helper.link.call(operation, *arguments)
        assert raised.value.code == code, operation
    # A failed write's payload was skipped: the next request on the connection is answered.
    with pytest.raises(ResidentError, match="ENOENT"):
        helper.link.call("write", "nowhere/x.txt", payload=b"y" * (CHUNK_BYTES + 5))
    assert helper.link.call("read", "docs/a.txt")[1] == b"alpha\n"
    assert not (helper.root / "nowhere").exists()


def test_large_payloads_cross_several_frames(helper: Helper) -> None:
    helper.link.call("unpack", payload=archive_of(None))
    data = os.urandom(2 * CHUNK_BYTES + 17)
    replaced, _ = helper.link.call("write", "big.bin", payload=data)
    assert replaced is None
    size, read = helper.link.call("read", "big.bin")
    assert (size, read) == (len(data), data)
    replaced, _ = helper.link.call("write", "big.bin", payload=b"small")
    assert replaced == ["f", len(data)]
    size, head = helper.link.call("head", "big.bin", 3, None)
    assert (size, head) == (5, b"sma")


def test_a_writable_snapshot_is_read_in_place_until_the_first_write(
    helper: Helper, source: Path
) -> None:
    frozen = helper.snapshots / "snap1"
    unpack_tree(io.BytesIO(archive_of(source)), str(helper.snapshots))
    (helper.snapshots / "sandbox").rename(frozen)
    helper.link.call("attach", "snap1", True)
    assert list(helper.root.iterdir()) == []  # nothing copied yet
    assert helper.link.call("read", "link")[1] == b"alpha\n"
    helper.link.call("write", "docs/a.txt", payload=b"changed")
    assert (helper.root / "docs").is_dir()
    assert (frozen / "docs" / "a.txt").read_text() == "alpha\n"  # the snapshot is untouched
    assert (helper.root / "docs" / "a.txt").read_bytes() == b"changed"
    # The copy kept the hard link's other name as a link to the same (old) inode, and times.
    assert (helper.root / "same.txt").read_text() == "alpha\n"
    assert (helper.root / "secret").lstat().st_mtime_ns == ODD_NS
    assert (helper.root / "link").is_symlink()
    assert helper.root.lstat().st_mtime_ns == ODD_NS
    assert not list(helper.root.rglob(".aj-*"))
    # Dropped for the next sandbox: empty again, and a new tree can be unpacked.
    helper.link.call("reset")
    assert list(helper.root.iterdir()) == []
    helper.link.call("unpack", payload=archive_of(None))


def test_a_read_only_snapshot_refuses_every_write(helper: Helper, source: Path) -> None:
    unpack_tree(io.BytesIO(archive_of(source)), str(helper.snapshots))
    (helper.snapshots / "sandbox").rename(helper.snapshots / "view")
    helper.link.call("attach", "view", False)
    for operation, arguments in [
        ("write", ("docs/a.txt",)),
        ("mkdir", ("new",)),
        ("move", ("secret", "moved")),
        ("materialise", ()),
    ]:
        if operation == "materialise":
            helper.link.call(operation)  # a no-op for a view: it never gets a copy
            continue
        with pytest.raises(ResidentError, match="EROFS"):
            helper.link.call(operation, *arguments, payload=b"x")
    assert list(helper.root.iterdir()) == []
    assert (helper.snapshots / "view" / "docs" / "a.txt").read_text() == "alpha\n"
    with pytest.raises(ResidentError, match="EEXIST"):
        helper.link.call("attach", "view", True)  # one tree per container
    helper.link.call("reset")
    with pytest.raises(ResidentError, match="EINVAL"):
        helper.link.call("attach", "../etc", True)


def test_an_archive_reaching_out_through_a_link_is_refused(helper: Helper, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        folder = tarfile.TarInfo("sandbox")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        link = tarfile.TarInfo("sandbox/out")
        link.type = tarfile.SYMTYPE
        link.linkname = str(outside)
        archive.addfile(link)
        planted = tarfile.TarInfo("sandbox/out/planted")
        planted.size = 1
        archive.addfile(planted, io.BytesIO(b"x"))
    with pytest.raises(ResidentError, match="EINVAL"):
        helper.link.call("unpack", payload=buffer.getvalue())
    assert list(outside.iterdir()) == []
    assert list(helper.root.iterdir()) == []  # what was unpacked before the refusal is gone


def test_a_helper_that_is_gone_is_a_clear_error(tmp_path: Path) -> None:
    made = Helper(tmp_path / "gone")
    made.process.kill()
    made.process.wait(timeout=10)
    with pytest.raises(SandboxError, match="test-helper"):
        made.link.call("ping")
    made.link.close()


def test_a_hard_link_reaching_out_through_a_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("host secret")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        folder = tarfile.TarInfo("sandbox")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        link = tarfile.TarInfo("sandbox/out")
        link.type = tarfile.SYMTYPE
        link.linkname = str(tmp_path)
        archive.addfile(link)
        hard = tarfile.TarInfo("sandbox/copy")
        hard.type = tarfile.LNKTYPE
        hard.linkname = "sandbox/out/secret"
        archive.addfile(hard)
    buffer.seek(0)
    (tmp_path / "into").mkdir()
    with pytest.raises(UnsafeMemberError):
        unpack_tree(buffer, str(tmp_path / "into"))
    assert not (tmp_path / "into" / "sandbox" / "copy").exists()
    assert secret.stat().st_nlink == 1

"""What only the Docker filesystem backend does: containers with a resident helper, a warm pool,
snapshot folders, exact times, and parity with the local backend operation by operation (the
shared contract is in ``test_backends``)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.models.containers import Container

from dataset.models import DirectoryTreeState, EmptyState, Task
from sandboxes.base import SandboxError
from sandboxes.docker.images import ensure_sandbox_image
from sandboxes.docker.resident_link import ResidentError
from sandboxes.filesystem.docker import (
    DockerFilesystemProvider,
    DockerFilesystemSandbox,
    DockerFilesystemSnapshot,
)
from sandboxes.filesystem.local import LocalFilesystemProvider
from sandboxes.filesystem.sandbox import FilesystemProvider, FilesystemSandbox
from sandboxes.filesystem.tree import FileStat, ReadOnlyTreeError
from sandboxes.runs import RUN_LABEL, current_run

pytestmark = pytest.mark.docker

OLD_NS = 1_600_000_000_123_456_789  # sub-second on purpose: the Engine's archives drop it


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    return ensure_sandbox_image()


@pytest.fixture
def engine() -> Iterator[docker.DockerClient]:
    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture
async def provider(sandbox_image: str) -> AsyncIterator[DockerFilesystemProvider]:
    async with DockerFilesystemProvider(sandbox_image) as made:
        yield made


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    tree = tmp_path / "task" / "initial"
    (tree / "docs" / "deep").mkdir(parents=True)
    (tree / "docs" / "a.txt").write_text("alpha\n")
    (tree / "docs" / "deep" / "b.md").write_text("# bee\n")
    (tree / "top.csv").write_bytes(b"x,y\n1,2\n")
    (tree / "secret.key").write_bytes(b"k")
    (tree / "secret.key").chmod(0o600)
    (tree / "run.sh").write_bytes(b"#!/bin/sh\n")
    (tree / "run.sh").chmod(0o755)
    (tree / "with space\nand newline.txt").write_bytes(b"odd name")
    (tree / "private").mkdir(mode=0o750)
    (tree / "private").chmod(0o750)
    (tree / "link-to-a").symlink_to("docs/a.txt")
    (tree / "link-to-deep").symlink_to("docs/deep")
    (tree / "dangling").symlink_to("docs/new-target.txt")
    (tree / "escape").symlink_to("/etc")
    (tree / "escape-up").symlink_to("../../..")
    for path in [*tree.rglob("*"), tree]:
        os.utime(path, ns=(OLD_NS, OLD_NS), follow_symlinks=False)
    return tmp_path / "task"


def tree_task() -> Task:
    return Task(
        id="fs-docker",
        domain="ds",
        subdomain="filesystem",
        instruction="Exercise the Docker backend.",
        initial_state=DirectoryTreeState(),
    )


def empty_task() -> Task:
    return tree_task().model_copy(update={"initial_state": EmptyState()})


def container_of(engine: docker.DockerClient, name: str) -> Container | None:
    try:
        return engine.containers.get(name)
    except docker.errors.NotFound:
        return None


def stray_writes(sandbox: DockerFilesystemSandbox) -> bytes:
    """The temporary files of writes left behind in the tree (none, ever)."""
    found = sandbox.container.exec_run(["find", "/sandbox", "-name", ".aj-write-*"]).output
    assert isinstance(found, bytes)
    return found


async def test_a_sandbox_is_a_labelled_container_without_network_or_ports(
    provider: DockerFilesystemProvider, engine: docker.DockerClient, task_dir: Path
) -> None:
    started = time.monotonic()
    sandbox = await provider.create(tree_task(), task_dir)
    ready = time.monotonic() - started
    assert ready < 3.0, f"container took {ready:.2f} s"
    assert sandbox.root == "/sandbox"
    assert sandbox.name.startswith(current_run().prefix + "fs_")
    container = container_of(engine, sandbox.name)
    assert container is not None
    assert container.status == "running"
    assert container.labels[RUN_LABEL] == current_run().run_id
    assert container.attrs["HostConfig"]["NetworkMode"] == "none"
    assert not container.attrs["HostConfig"]["PortBindings"]
    assert not container.attrs["NetworkSettings"]["Ports"]
    output = container.exec_run(["cat", "/proc/net/dev"]).output
    assert isinstance(output, bytes)
    interfaces = output.decode()
    assert [line.split(":")[0].strip() for line in interfaces.splitlines()[2:]] == ["lo"]
    await sandbox.destroy()
    assert container_of(engine, sandbox.name) is None
    await sandbox.destroy()  # idempotent


async def test_creation_keeps_exact_times_modes_symlinks_and_odd_names(
    provider: DockerFilesystemProvider, task_dir: Path
) -> None:
    sandbox = await provider.create(tree_task(), task_dir)
    entries = {entry.path: entry for entry in await sandbox.tree.walk()}
    source = task_dir / "initial"
    for relative, entry in entries.items():
        status = (source / relative).lstat()
        assert entry.modified == status.st_mtime, relative
        assert entry.mode == status.st_mode & 0o7777, relative
    root = await sandbox.tree.stat("")
    assert root.modified == source.stat().st_mtime
    assert entries["secret.key"].mode == 0o600
    assert entries["run.sh"].mode == 0o755
    assert entries["private"].mode == 0o750
    assert entries["link-to-deep"].kind == "symlink"
    assert entries["link-to-deep"].size == len("docs/deep")
    assert await sandbox.tree.read_bytes("with space\nand newline.txt") == b"odd name"
    assert await sandbox.tree.resolve("link-to-deep/b.md") == "docs/deep/b.md"
    assert [entry.path for entry in await sandbox.tree.list_directory("link-to-deep")] == [
        "link-to-deep/b.md"
    ]


async def test_an_empty_state_gives_an_empty_writable_root(
    provider: DockerFilesystemProvider, tmp_path: Path
) -> None:
    sandbox = await provider.create(empty_task(), tmp_path)
    assert await sandbox.tree.walk() == []
    await sandbox.tree.write_bytes("first.txt", b"1")
    assert [entry.path for entry in await sandbox.tree.walk()] == ["first.txt"]
    assert (await sandbox.tree.stat("first.txt")).mode == 0o644


async def test_writes_replace_the_file_and_leave_nothing_behind(
    provider: DockerFilesystemProvider, task_dir: Path
) -> None:
    sandbox = await provider.create(tree_task(), task_dir)
    assert isinstance(sandbox, DockerFilesystemSandbox)
    before = sandbox.container.exec_run(["stat", "-c", "%i", "/sandbox/secret.key"]).output
    big = os.urandom(3 * 1024 * 1024)
    await sandbox.tree.write_bytes("secret.key", big)
    after = sandbox.container.exec_run(["stat", "-c", "%i", "/sandbox/secret.key"]).output
    assert before != after  # a new inode, not an in-place write
    assert await sandbox.tree.read_bytes("secret.key") == big
    assert (await sandbox.tree.stat("secret.key")).mode == 0o600
    assert stray_writes(sandbox) == b""
    with pytest.raises(IsADirectoryError):
        await sandbox.tree.write_bytes("docs", b"x")
    with pytest.raises(IsADirectoryError):
        await sandbox.tree.write_bytes("", b"x")
    assert stray_writes(sandbox) == b""


async def test_freezing_makes_a_snapshot_folder_and_clones_are_isolated(
    provider: DockerFilesystemProvider, engine: docker.DockerClient, task_dir: Path
) -> None:
    sandbox = await provider.create(tree_task(), task_dir)
    await sandbox.tree.write_bytes("docs/a.txt", b"replayed")
    await sandbox.tree.move("top.csv", "docs/top.csv")
    original = {entry.path: entry for entry in await sandbox.tree.walk()}
    snapshot = await sandbox.freeze()
    assert isinstance(snapshot, DockerFilesystemSnapshot)
    assert container_of(engine, sandbox.name) is None
    assert snapshot.folder.is_dir()
    assert snapshot.folder.is_relative_to(current_run().directory())
    assert snapshot.name.startswith(current_run().prefix + "fsnap_")
    assert (snapshot.folder / "docs" / "a.txt").read_bytes() == b"replayed"
    with pytest.raises(SandboxError):
        await sandbox.freeze()

    first, second = await snapshot.clone(), await snapshot.clone()
    assert first.name != second.name
    cloned = {entry.path: entry for entry in await first.tree.walk()}
    assert sorted(cloned) == sorted(original)
    for path, entry in original.items():
        assert cloned[path].modified == entry.modified, path
        assert cloned[path].mode == entry.mode, path
    await first.tree.write_bytes("docs/a.txt", b"first judge")
    await first.tree.move("docs/top.csv", "gone.csv")
    assert await second.tree.read_bytes("docs/a.txt") == b"replayed"
    assert await second.tree.read_bytes("docs/top.csv") == b"x,y\n1,2\n"
    assert (snapshot.folder / "docs" / "a.txt").read_bytes() == b"replayed"
    # The first write copied the snapshot with its exact times.
    copied = {entry.path: entry for entry in await first.tree.walk()}
    assert copied["docs/deep/b.md"].modified == original["docs/deep/b.md"].modified

    # A clone frozen again keeps its own changes, including what it moved away.
    refrozen = await first.freeze()
    third = await refrozen.clone()
    assert await third.tree.read_bytes("docs/a.txt") == b"first judge"
    with pytest.raises(FileNotFoundError):
        await third.tree.stat("docs/top.csv")
    for clone in (second, third):
        await clone.destroy()
    await refrozen.destroy()
    await snapshot.destroy()
    assert not snapshot.folder.exists()
    assert not refrozen.folder.exists()


async def test_the_read_only_view_is_one_container_on_a_read_only_mount(
    provider: DockerFilesystemProvider, engine: docker.DockerClient, task_dir: Path
) -> None:
    snapshot = await (await provider.create(tree_task(), task_dir)).freeze()
    view = await snapshot.clone(writable=False)
    assert isinstance(view, DockerFilesystemSandbox)
    assert await snapshot.clone(writable=False) is view
    assert view.read_only
    assert view.tree.read_only
    container = container_of(engine, view.name)
    assert container is not None
    mounts = {mount["Destination"]: mount for mount in container.attrs["Mounts"]}
    assert mounts["/snapshots"]["RW"] is False
    with pytest.raises(ReadOnlyTreeError):
        await view.tree.write_bytes("docs/a.txt", b"x")
    with pytest.raises(ReadOnlyTreeError):
        await view.tree.move("docs/a.txt", "b.txt")
    # Not only the Python check: the container itself cannot write the tree.
    touched = container.exec_run(["touch", f"/snapshots/{snapshot.name}/docs/a.txt"])
    assert touched.exit_code != 0
    # Nor does its helper, asked directly.
    with pytest.raises(ResidentError, match="EROFS"):
        view.tree.link.call("write", "docs/a.txt", payload=b"x")
    assert await view.tree.read_bytes("docs/a.txt") == b"alpha\n"
    await view.destroy()  # a view's destroy leaves the shared container to the snapshot
    assert container_of(engine, view.name) is not None
    await snapshot.destroy()
    assert container_of(engine, view.name) is None
    assert not snapshot.folder.exists()
    await snapshot.destroy()  # idempotent


async def test_a_snapshot_with_live_clones_is_not_removed(
    provider: DockerFilesystemProvider, task_dir: Path
) -> None:
    snapshot = await (await provider.create(tree_task(), task_dir)).freeze()
    assert isinstance(snapshot, DockerFilesystemSnapshot)
    clone = await snapshot.clone()
    with pytest.raises(SandboxError, match="clone"):
        await snapshot.destroy()
    assert snapshot.folder.is_dir()
    assert await clone.tree.read_bytes("top.csv") == b"x,y\n1,2\n"
    await clone.destroy()
    await snapshot.destroy()
    assert not snapshot.folder.exists()


async def test_closing_the_provider_after_an_error_removes_containers_and_folders(
    sandbox_image: str, engine: docker.DockerClient, task_dir: Path
) -> None:
    containers: list[str] = []
    folders: list[Path] = []

    async def crashing_judge() -> None:
        async with DockerFilesystemProvider(sandbox_image, pool_size=2) as provider:
            live = await provider.create(tree_task(), task_dir)
            snapshot = await (await provider.create(tree_task(), task_dir)).freeze()
            clone = await snapshot.clone()
            view = await snapshot.clone(writable=False)
            containers.extend([live.name, clone.name, view.name])
            folders.extend([snapshot.folder, provider.snapshot_folder()])
            assert all(container_of(engine, name) for name in containers)
            raise RuntimeError("judge crashed")

    with pytest.raises(RuntimeError, match="judge crashed"):
        await crashing_judge()
    assert len(containers) == 3
    assert not any(container_of(engine, name) for name in containers)
    assert not any(folder.exists() for folder in folders)
    left = engine.containers.list(
        all=True, filters={"label": f"{RUN_LABEL}={current_run().run_id}"}
    )
    prefix = current_run().prefix + "fs_"
    assert [item.name for item in left if str(item.name).startswith(prefix)] == []


async def test_export_restores_exact_times_and_refuses_an_existing_target(
    provider: DockerFilesystemProvider, task_dir: Path, tmp_path: Path
) -> None:
    sandbox = await provider.create(tree_task(), task_dir)
    target = tmp_path / "out" / "tree"
    await sandbox.tree.export(target)
    source = task_dir / "initial"
    for path in [*source.rglob("*"), source]:
        relative = path.relative_to(source)
        exported = (target / relative).lstat()
        original = path.lstat()
        assert exported.st_mtime_ns == original.st_mtime_ns, relative
        assert exported.st_mode == original.st_mode, relative
    assert os.readlink(target / "escape") == "/etc"
    assert (target / "with space\nand newline.txt").read_bytes() == b"odd name"
    assert not [path for path in target.parent.iterdir() if path.name.startswith(".aj-")]
    with pytest.raises(FileExistsError):
        await sandbox.tree.export(target)


async def test_a_missing_image_is_a_clear_error(tmp_path: Path) -> None:
    async with DockerFilesystemProvider("agentjudge/sandbox:does-not-exist") as provider:
        with pytest.raises(SandboxError, match="missing"):
            await provider.create(empty_task(), tmp_path)


# Parity with the local backend: the same operations, the same results and the same errors.

Operation = Callable[[FilesystemSandbox], Awaitable[Any]]


def _shape(value: Any) -> Any:
    if isinstance(value, FileStat):
        # Directory sizes depend on the filesystem; everything else must agree.
        size = None if value.kind == "directory" else value.size
        return (value.path, value.kind, size, value.mode)
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value


OPERATIONS: list[tuple[str, Operation]] = [
    ("read file", lambda s: s.tree.read_bytes("docs/a.txt")),
    ("read through link", lambda s: s.tree.read_bytes("link-to-a")),
    ("read directory", lambda s: s.tree.read_bytes("docs")),
    ("read missing", lambda s: s.tree.read_bytes("missing.txt")),
    ("read below a file", lambda s: s.tree.read_bytes("docs/a.txt/x")),
    ("read escaping link", lambda s: s.tree.read_bytes("escape/hostname")),
    ("read escaping relative link", lambda s: s.tree.read_bytes("escape-up/x")),
    ("stat link", lambda s: s.tree.stat("link-to-deep")),
    ("stat escaping link", lambda s: s.tree.stat("escape")),
    ("stat below a file", lambda s: s.tree.stat("docs/a.txt/x")),
    ("stat below missing", lambda s: s.tree.stat("missing/x")),
    ("list root", lambda s: s.tree.list_directory("")),
    ("list through link", lambda s: s.tree.list_directory("link-to-deep")),
    ("list a file", lambda s: s.tree.list_directory("top.csv")),
    ("list missing", lambda s: s.tree.list_directory("missing")),
    ("list escaping link", lambda s: s.tree.list_directory("escape")),
    ("walk root", lambda s: s.tree.walk()),
    ("walk a file", lambda s: s.tree.walk("top.csv")),
    ("walk missing", lambda s: s.tree.walk("missing")),
    ("resolve link", lambda s: s.tree.resolve("link-to-deep/b.md")),
    ("resolve missing tail", lambda s: s.tree.resolve("docs/none/deeper")),
    ("resolve dangling", lambda s: s.tree.resolve("dangling")),
    ("resolve root", lambda s: s.tree.resolve("")),
    ("resolve escaping", lambda s: s.tree.resolve("escape-up")),
    ("write new", lambda s: s.tree.write_bytes("docs/new.txt", b"n")),
    ("write through link", lambda s: s.tree.write_bytes("link-to-a", b"via link")),
    ("read link target", lambda s: s.tree.read_bytes("docs/a.txt")),
    ("stat link after write", lambda s: s.tree.stat("link-to-a")),
    ("write dangling", lambda s: s.tree.write_bytes("dangling", b"made")),
    ("read made target", lambda s: s.tree.read_bytes("docs/new-target.txt")),
    ("write keeps mode", lambda s: s.tree.write_bytes("secret.key", b"k2")),
    ("stat kept mode", lambda s: s.tree.stat("secret.key")),
    ("write directory", lambda s: s.tree.write_bytes("docs/deep", b"x")),
    ("write missing parent", lambda s: s.tree.write_bytes("nowhere/x.txt", b"x")),
    ("write below a file", lambda s: s.tree.write_bytes("top.csv/x", b"x")),
    ("write escaping", lambda s: s.tree.write_bytes("escape/owned", b"x")),
    ("mkdir nested", lambda s: s.tree.make_directory("n/e/w")),
    ("mkdir again", lambda s: s.tree.make_directory("n/e/w")),
    ("mkdir through link", lambda s: s.tree.make_directory("link-to-deep/sub")),
    ("mkdir on a file", lambda s: s.tree.make_directory("top.csv")),
    ("mkdir below a file", lambda s: s.tree.make_directory("top.csv/x/y")),
    ("mkdir escaping", lambda s: s.tree.make_directory("escape-up/x")),
    ("move file", lambda s: s.tree.move("run.sh", "n/run.sh")),
    ("move directory", lambda s: s.tree.move("private", "n/e/private")),
    ("move link itself", lambda s: s.tree.move("link-to-deep", "n/link")),
    ("read moved link", lambda s: s.tree.read_bytes("n/link/b.md")),
    ("move missing", lambda s: s.tree.move("nope", "nope2")),
    ("move onto existing", lambda s: s.tree.move("top.csv", "docs/a.txt")),
    ("move onto directory", lambda s: s.tree.move("top.csv", "docs")),
    ("move into missing", lambda s: s.tree.move("top.csv", "missing/top.csv")),
    ("move below a file", lambda s: s.tree.move("top.csv", "secret.key/x")),
    ("move into itself", lambda s: s.tree.move("docs", "docs/deep/docs")),
    ("move escaping", lambda s: s.tree.move("top.csv", "escape/top.csv")),
    ("final walk", lambda s: s.tree.walk()),
]


async def _outcomes(provider: FilesystemProvider, task_dir: Path) -> list[tuple[str, Any]]:
    async with await provider.create(tree_task(), task_dir) as sandbox:
        assert isinstance(sandbox, FilesystemSandbox)
        outcomes: list[tuple[str, Any]] = []
        for label, operation in OPERATIONS:
            try:
                outcomes.append((label, ("ok", _shape(await operation(sandbox)))))
            except (OSError, ValueError) as error:  # TreePathError is a ValueError
                outcomes.append((label, ("error", type(error).__name__)))
        contents = {
            entry.path: await sandbox.tree.read_bytes(entry.path)
            for entry in await sandbox.tree.walk()
            if entry.kind == "file"
        }
        outcomes.append(("contents", contents))
        return outcomes


async def test_every_operation_behaves_as_on_the_local_backend(
    provider: DockerFilesystemProvider, task_dir: Path
) -> None:
    async with LocalFilesystemProvider() as local:
        expected = await _outcomes(local, task_dir)
    actual = await _outcomes(provider, task_dir)
    assert len(actual) == len(expected)
    for (label, want), (_, got) in zip(expected, actual, strict=True):
        assert got == want, label
    # The comparison is only worth something if the scenario hit both outcomes.
    kinds = {outcome[1][0] for outcome in expected if outcome[0] != "contents"}
    assert kinds == {"ok", "error"}


async def test_a_helper_that_died_is_a_clear_error(
    provider: DockerFilesystemProvider, task_dir: Path
) -> None:
    sandbox = await provider.create(tree_task(), task_dir)
    async with sandbox:
        assert (await sandbox.tree.stat("docs/a.txt")).size == len(b"alpha\n")
        sandbox.container.kill()
        with pytest.raises(SandboxError, match=sandbox.name):
            await sandbox.tree.stat("docs/a.txt")


async def wait_for_pool(provider: DockerFilesystemProvider, count: int) -> list[str]:
    for _ in range(600):
        if len(provider.pool.waiting()) >= count:
            return provider.pool.waiting()
        await asyncio.sleep(0.05)
    raise AssertionError(f"the pool never held {count} containers")


async def test_the_pool_reuses_only_containers_nobody_else_was_handed(
    sandbox_image: str, engine: docker.DockerClient, tmp_path: Path
) -> None:
    async with DockerFilesystemProvider(sandbox_image, pool_size=1) as provider:
        first = await provider.create(empty_task(), tmp_path)
        await first.tree.write_bytes("left-behind.txt", b"x")
        provider.pool.size = 4  # room for it, whatever the refill has done meanwhile
        await first.destroy()
        assert container_of(engine, first.name) is None  # renamed: a name is never reused
        assert first.resident.name in provider.pool.waiting()
        assert first.resident.link.call("walk", "")[0] == []  # its tree is gone
        taken = [await provider.create(empty_task(), tmp_path) for _ in provider.pool.waiting()]
        [second] = [
            item for item in taken if item.resident.container.id == first.resident.container.id
        ]
        assert second.name != first.name
        assert await second.tree.walk() == []  # nothing of the first sandbox is left
        second.container.exec_run(["true"])  # handed out: someone may have run anything
        for item in taken:
            await item.destroy()
        assert second.name not in provider.pool.waiting()
        assert second.resident.container.id not in {
            item.id for item in engine.containers.list(all=True)
        }


async def test_containers_idle_in_the_pool_are_removed(
    sandbox_image: str, engine: docker.DockerClient, tmp_path: Path
) -> None:
    async with DockerFilesystemProvider(
        sandbox_image, pool_size=1, pool_idle_seconds=1.0
    ) as provider:
        sandbox = await provider.create(empty_task(), tmp_path)
        waiting = await wait_for_pool(provider, 1)
        assert all(container_of(engine, name) is not None for name in waiting)
        await asyncio.sleep(2.5)
        assert provider.pool.waiting() == []
        assert all(container_of(engine, name) is None for name in waiting)
        await sandbox.destroy()

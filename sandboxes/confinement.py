"""Running code that comes with a dataset (``verify.py``, preparation scripts) in a box.

Owns the bubblewrap box: what it binds, the environment it starts with, the user it runs as, how
its output is captured and how it is killed. A box has no network, its own process, IPC, UTS and
cgroup namespaces, sees the system directories, the interpreter and the runtime's virtualenv
read-only, the paths its caller names read-only (a task folder, a sandbox tree, a relay's socket
folder) and writes only to a fresh work folder (its ``HOME``) and a small private ``/tmp``. Its
environment holds a fixed set of variables plus the ones the caller names, never the runtime's.

As root, bubblewrap builds the box and ``setpriv`` drops to ``nobody`` (uid 65534) with no
capabilities and ``no_new_privs`` before the command runs; as another user, bubblewrap runs
unprivileged in a user namespace of its own. Either way the box is a pid namespace whose first
process is the command: when it ends, the kernel kills every other process in the namespace
before bubblewrap returns, including ones that left its session or closed their output. The
command dies with bubblewrap, bubblewrap with its caller, and a timeout or a cancelled caller
kills both at once and waits for the box to be empty. Output (standard output and error,
interleaved) is read as it comes and written to a log file capped in bytes: its head, a note of
what was cut, its tail; the caller keeps a bounded excerpt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from sandboxes.base import SandboxError
from sandboxes.runs import current_run, track_process, untrack_process
from sandboxes.system_packages import can_install, install_with_apt

BOX_USER = 65534
"""The uid and gid (``nobody``/``nogroup``) the command runs as when the runtime is root."""

WORK_MOUNT = Path("/box")
"""Where the box sees its work folder: its ``HOME``; ``TMPDIR`` is ``/box/tmp``."""

TMP_BYTES = 64 * 2**20
"""Size of the box's private ``/tmp`` (in RAM); larger scratch files belong in ``TMPDIR``."""

SHM_BYTES = 64 * 2**20
"""Size of the box's ``/dev/shm`` where the box user may write there (unprivileged boxes)."""

SEED_MOUNT = Path("/run/agentjudge-seed")
"""Where a box whose work folder is in RAM (``BoxSpec.work_bytes``) sees the host work folder,
read-only, to copy its starting contents from."""

LOG_HEAD_BYTES = 2**20
"""Bytes of output the log file keeps from the start."""

TAIL_BYTES = 64 * 2**10
"""Bytes of output kept from the end (in the log file, and in memory while the command runs)."""

EXCERPT_BYTES = 64 * 2**10
"""Bytes of the output's start kept in memory for the caller's excerpt (``BoxRun.text``)."""

BUBBLEWRAP_HINT = (
    "dataset code (verify.py) runs in a bubblewrap box, and bwrap is not installed: install it "
    "with `apt-get install bubblewrap` (as root; a run as root installs it itself), then rerun"
)
"""The one line a machine without bubblewrap gets when the runtime cannot install it."""

_SYSTEM_DIRECTORIES = ("/usr", "/etc")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_READ_CHUNK = 64 * 2**10
_DRAIN_SECONDS = 5.0
_SETTLE_SECONDS = 2.0


class ConfinementError(SandboxError):
    """The box cannot be built here (bubblewrap or setpriv missing, a path to bind missing)."""


def require_bubblewrap() -> str:
    """The path of ``bwrap`` (and, as root, check ``setpriv`` too). A missing bubblewrap is
    installed with apt when this process is root on a machine that has apt (as the image build
    does with debootstrap); otherwise ``ConfinementError`` says in one line how to install it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None and can_install():
        failure = install_with_apt("bubblewrap", "bwrap")
        if failure is not None:
            raise ConfinementError(f"{BUBBLEWRAP_HINT} ({failure})")
        bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ConfinementError(BUBBLEWRAP_HINT)
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        raise ConfinementError(
            "dataset code runs in a box as an unprivileged user, switched to with setpriv, which "
            "is not installed: install it with `apt-get install util-linux`"
        )
    return bwrap


DATASET_CODE_MAX_SECONDS = 1800.0
"""The longest a dataset's script may run, whatever timeout its task asks for."""


def dataset_code_timeout(asked: float) -> float:
    """The timeout a dataset's script really gets: what its task asks, at most the ceiling."""
    return min(asked, DATASET_CODE_MAX_SECONDS)


@dataclass(frozen=True)
class BoxLimits:
    """Resource limits of one box, so dataset code cannot exhaust the machine (each enforced by
    the kernel: ``prlimit`` on the boxed command, a size-capped file system for the work folder).
    """

    memory_bytes: int = 4 * 2**30
    """Address space of each process (``RLIMIT_AS``)."""
    cpu_seconds: int = int(DATASET_CODE_MAX_SECONDS)
    """CPU time of each process (``RLIMIT_CPU``); SIGXCPU, then SIGKILL, past it."""
    processes: int = 512
    """Processes of the box user (``RLIMIT_NPROC``; as root only, where the box user is
    ``nobody``: unprivileged, the count would include the caller's own processes)."""
    file_bytes: int = 1 * 2**30
    """Size of any one file written (``RLIMIT_FSIZE``)."""
    work_bytes: int = 512 * 2**20
    """Size of the work folder (``HOME``, ``TMPDIR``): a RAM file system of this size in the box
    instead of a host folder, thrown away with the box."""


@dataclass(frozen=True)
class BoxSpec:
    """What runs in a box and what it sees."""

    command: Sequence[str]
    """The program and its arguments, as the box sees them (e.g. ``sys.executable``)."""
    cwd: Path
    """The working directory inside the box: one of ``read_only`` (or below one), or the work
    folder."""
    read_only: Sequence[Path] = ()
    """Host paths bound read-only at the same place inside the box (symlinks in them resolve
    inside the box, so they cannot reach what is not bound)."""
    copied: Sequence[Path] = ()
    """Host folders shown read-only at the same place as copies made readable by the box user
    (for folders whose modes keep it out; symlinks are copied as symlinks)."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the box's fixed environment (``PATH``, ``HOME``, ``TMPDIR``, ...)."""
    timeout: float = 60.0
    """Seconds after which the whole box is killed."""
    interpreter: bool = True
    """Bind this interpreter's installation and virtualenv read-only (so ``command`` may be
    ``sys.executable``, with the runtime's packages)."""
    work_mount: Path = WORK_MOUNT
    """Where the work folder shows inside the box; also ``HOME`` and the parent of ``TMPDIR``
    (a desktop puts it where its user's home is on every other backend)."""
    limits: BoxLimits | None = None
    """Resource limits (None: only the timeout; a desktop has its own memory cgroup)."""
    work_bytes: int | None = None
    """Without ``limits``: make the work folder a RAM file system of this size (a disk quota),
    filled at start with a copy of the host work folder, which the box then only reads."""
    bound: Sequence[tuple[Path, Path]] = ()
    """Host folders bound at another place inside the box (host path, box path), writable as
    their modes allow (a desktop's control-socket folder, which the host closes once the socket
    is made)."""


@dataclass(frozen=True)
class BoxRun:
    """How a boxed command ended and what it printed."""

    exit_code: int | None
    """Its exit code (128 + n when signal n ended it); None when it was killed for time."""
    timed_out: bool
    """True when it ran past its timeout and the box was killed."""
    seconds: float
    """Wall time, box set-up included."""
    output_bytes: int
    """Bytes it printed in all (standard output and error)."""
    head: bytes
    """The start of the output (at most ``EXCERPT_BYTES``)."""
    tail: bytes
    """The end of the output (at most ``TAIL_BYTES``), when it did not fit in ``head``."""
    log: Path
    """The capped log file (head, a note of what was cut, tail)."""

    def text(self, limit: int) -> str:
        """The output as text of at most about ``limit`` characters: all of it when it fits,
        else its start and end around a note of how much was cut."""
        if len(self.head) == self.output_bytes:
            whole = self.head.decode(errors="replace")
            if len(whole) <= limit:
                return whole
            start, end = whole[: limit // 2], whole[-(limit // 2) :]
            cut = len(whole) - len(start) - len(end)
            return f"{start}\n[... {cut} characters cut ...]\n{end}"
        start_bytes = self.head[: limit // 2]
        end_bytes = self.tail[-(limit // 2) :] if self.tail else b""
        cut = self.output_bytes - len(start_bytes) - len(end_bytes)
        start = start_bytes.decode(errors="replace")
        end = end_bytes.decode(errors="replace")
        return f"{start}\n[... {cut} bytes cut ...]\n{end}"


class _CappedOutput:
    """Receives a stream in chunks: writes its head to the log as it comes, keeps its tail in a
    bounded buffer and writes that (after a note of what was cut) when the stream ends."""

    def __init__(self, log: Path, head_bytes: int) -> None:
        self.log = log
        self.head_limit = head_bytes
        self.total = 0
        self.excerpt = bytearray()
        self.tail = bytearray()
        self._file = log.open("wb")

    async def write(self, chunk: bytes) -> None:
        start = self.total
        self.total += len(chunk)
        if len(self.excerpt) < EXCERPT_BYTES:
            self.excerpt += chunk[: EXCERPT_BYTES - len(self.excerpt)]
        self.tail += chunk[-TAIL_BYTES:]
        if len(self.tail) > TAIL_BYTES:
            del self.tail[: len(self.tail) - TAIL_BYTES]
        if start < self.head_limit:
            await asyncio.to_thread(self._file.write, chunk[: self.head_limit - start])

    async def close(self) -> None:
        if self._file.closed:
            return
        beyond = self.total - self.head_limit
        if beyond > 0:
            kept = bytes(self.tail[-min(beyond, TAIL_BYTES) :])
            cut = beyond - len(kept)
            note = f"\n[... {cut} bytes cut ...]\n".encode() if cut else b""
            await asyncio.to_thread(self._file.write, note + kept)
        await asyncio.to_thread(self._file.close)

    def result_tail(self) -> bytes:
        """The end of the output when the excerpt does not hold all of it."""
        return b"" if self.total <= len(self.excerpt) else bytes(self.tail)


# -- the command line -----------------------------------------------------------------------------


def _interpreter_paths() -> list[Path]:
    """What this interpreter needs to start: its prefixes (the virtualenv as ``sys.executable``
    names it, and the installation behind it with symlinks resolved) and the installation of the
    real executable."""
    paths = {Path(os.path.abspath(sys.prefix))}
    for prefix in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix):
        paths.add(Path(os.path.realpath(prefix)))
    paths.add(Path(os.path.realpath(sys.executable)).parent.parent)
    return sorted(path for path in paths if path != path.parent)  # never the whole of /


def _is_within(path: Path, others: Iterable[Path]) -> bool:
    return any(path.is_relative_to(other) for other in others)


def _system_arguments() -> list[str]:
    arguments: list[str] = []
    for directory in _SYSTEM_DIRECTORIES:
        arguments += ["--ro-bind", directory, directory]
    for name in _SYSTEM_LINKS:
        path = Path(name)
        if path.is_symlink():
            arguments += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            arguments += ["--ro-bind", name, name]
    return arguments


def _binds(mounts: Iterable[tuple[Path, Path]], work_mount: Path) -> list[str]:
    """The read-only binds of ``mounts`` (source, target) whose targets are not already visible
    through the system binds or another target, each after ``--dir`` arguments making its
    parents traversable by the box user."""
    visible = [Path(d) for d in _SYSTEM_DIRECTORIES]
    chosen: dict[Path, Path] = {}
    for source, target in sorted(set(mounts), key=lambda m: (len(m[1].parts), str(m[1]))):
        if target.is_relative_to("/proc") or target.is_relative_to(work_mount):
            raise ConfinementError(f"cannot bind {target} into the box: the box owns that path")
        if not _is_within(target, [*visible, *chosen]):
            chosen[target] = source
    made = {Path("/"), Path("/tmp"), Path("/dev"), Path("/dev/shm")}
    arguments: list[str] = []
    for target, source in chosen.items():
        for parent in reversed(target.parents):
            if parent not in made:
                made.add(parent)
                arguments += ["--perms", "0755", "--dir", str(parent)]
        arguments += ["--ro-bind", str(source), str(target)]
    return arguments


def _traversable_parents(target: Path) -> list[str]:
    """``--dir`` arguments making the folders above ``target`` traversable by the box user (the
    ones bubblewrap would make for a mount point are closed to it)."""
    arguments: list[str] = []
    for parent in reversed(target.parents):
        if parent != Path("/"):
            arguments += ["--perms", "0755", "--dir", str(parent)]
    return arguments


def box_environment(extra: Mapping[str, str], work_mount: Path = WORK_MOUNT) -> dict[str, str]:
    """The box's whole environment: a fixed base and ``extra`` (which wins on a clash)."""
    base = {
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work_mount),
        "TMPDIR": str(work_mount / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    return {**base, **extra}


def box_command(
    spec: BoxSpec,
    work: Path,
    *,
    copies: Mapping[Path, Path] | None = None,
    privileged: bool | None = None,
    bwrap: str = "bwrap",
    status_fd: int | None = None,
) -> list[str]:
    """The command line that runs ``spec`` in a box with ``work`` as its work folder and
    ``copies`` (each of ``spec.copied`` to the copy shown in its place).

    ``privileged`` (default: whether this process is root) picks the set-up: bubblewrap as root,
    then ``setpriv`` down to ``BOX_USER``; or bubblewrap unprivileged in a user namespace.
    ``status_fd`` is a descriptor bubblewrap writes its status messages to (``child-pid``)."""
    if privileged is None:
        privileged = os.geteuid() == 0
    if privileged:
        namespaces = [
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
    else:
        namespaces = ["--unshare-all", "--unshare-user", "--disable-userns"]
    copies = copies or {}
    interpreter = _interpreter_paths() if spec.interpreter else []
    missing = [path for path in spec.copied if path not in copies]
    if missing:
        raise ValueError(f"no copy given for {missing[0]}")
    binds = _binds(
        [
            *((path, path) for path in interpreter),
            *((path, path) for path in spec.read_only),
            *((copies[path], path) for path in spec.copied),
        ],
        spec.work_mount,
    )
    status = [] if status_fd is None else ["--json-status-fd", str(status_fd)]
    arguments = [
        bwrap,
        *status,
        *namespaces,
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "box",
        *_system_arguments(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        "/tmp",
        *binds,
        *_traversable_parents(spec.work_mount),
        *_work_arguments(spec, work),
        *_bound_arguments(spec.bound),
        *([] if privileged else _unprivileged_walls()),
        "--clearenv",
    ]
    for name, value in box_environment(spec.environment, spec.work_mount).items():
        arguments += ["--setenv", name, value]
    arguments += ["--chdir", str(spec.cwd)]
    if privileged:
        arguments += [
            "setpriv",
            f"--reuid={BOX_USER}",
            f"--regid={BOX_USER}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    if spec.limits is not None:
        arguments += _limit_arguments(spec.limits, privileged=privileged)
    if spec.limits is None and spec.work_bytes is not None:
        arguments += ["/bin/sh", "-c", _SEED_SCRIPT, "seed"]
    return [*arguments, *spec.command]


_SEED_SCRIPT = f'cp -RP {SEED_MOUNT}/. "$HOME"/ && exec "$@"'
"""Copies the host work folder into the box's RAM work folder, then runs the command."""


def _work_arguments(spec: BoxSpec, work: Path) -> list[str]:
    mount = str(spec.work_mount)
    if spec.limits is not None:
        return [
            *("--perms", "0777", "--size", str(spec.limits.work_bytes), "--tmpfs", mount),
            *("--perms", "1777", "--dir", f"{mount}/tmp"),
        ]
    if spec.work_bytes is not None:
        return [
            *_traversable_parents(SEED_MOUNT),
            *("--ro-bind", str(work), str(SEED_MOUNT)),
            *("--perms", "0777", "--size", str(spec.work_bytes), "--tmpfs", mount),
        ]
    return ["--bind", str(work), mount]


def _bound_arguments(bound: Sequence[tuple[Path, Path]]) -> list[str]:
    arguments: list[str] = []
    for host, inside in bound:
        arguments += [*_traversable_parents(inside), "--bind", str(host), str(inside)]
    return arguments


def _unprivileged_walls() -> list[str]:
    """Unprivileged, the box user owns the box's root and ``/dev`` (RAM file systems without a
    size): a capped ``/dev/shm``, then both made read-only, so the work folder and ``/tmp``
    are the only places it writes, each with a size."""
    return [
        *("--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"),
        *("--remount-ro", "/dev", "--remount-ro", "/"),
    ]


def _limit_arguments(limits: BoxLimits, *, privileged: bool) -> list[str]:
    arguments = [
        "prlimit",
        f"--as={limits.memory_bytes}",
        f"--cpu={limits.cpu_seconds}",
        f"--fsize={limits.file_bytes}",
    ]
    if privileged:
        arguments.append(f"--nproc={limits.processes}")
    return [*arguments, "--"]


# -- running --------------------------------------------------------------------------------------


def _check_paths(spec: BoxSpec) -> None:
    for path in [*spec.read_only, *spec.copied]:
        if not path.is_absolute():
            raise ConfinementError(f"cannot bind {path} into the box: not an absolute path")
        if not path.exists():
            raise ConfinementError(f"cannot bind {path} into the box: it does not exist")
    for path in spec.copied:
        if not path.is_dir():
            raise ConfinementError(f"cannot copy {path} into the box: not a folder")


def box_can_read(path: Path) -> bool:
    """Whether the box user may read ``path`` (and list it, for a folder) by its mode bits.

    As root the box user is ``BOX_USER``; otherwise it is the caller itself."""
    folder = path.is_dir()
    if os.geteuid() != 0:
        return os.access(path, os.R_OK | (os.X_OK if folder else 0))
    status = path.stat()
    if status.st_uid == BOX_USER:
        bits = status.st_mode >> 6
    elif status.st_gid == BOX_USER:
        bits = status.st_mode >> 3
    else:
        bits = status.st_mode
    needed = 0o5 if folder else 0o4
    return bits & needed == needed


def _copy_readable(source: Path, destination: Path) -> None:
    """Copy a folder (symlinks as symlinks) and let everyone read and list the copy."""
    shutil.copytree(source, destination, symlinks=True)
    for root, _, files in os.walk(destination):
        Path(root).chmod(Path(root).stat().st_mode & 0o7777 | 0o555)
        for name in files:
            item = Path(root, name)
            if not item.is_symlink():
                item.chmod(item.stat().st_mode & 0o7777 | 0o444)


def _make_work(folder: Path, privileged: bool) -> Path:
    work = folder / "work"
    (work / "tmp").mkdir(parents=True)
    if privileged:
        for path in (work, work / "tmp"):
            os.chown(path, BOX_USER, BOX_USER)
    work.chmod(0o700)
    return work


def remove_tree(path: Path) -> None:
    """Remove a folder the box wrote into, whatever modes the box left on its folders (root
    ignores them; another user first gives itself access back)."""
    if os.geteuid() != 0:
        with contextlib.suppress(OSError):
            path.chmod(0o700)
        for root, folders, _ in os.walk(path):
            for name in folders:
                inner = Path(root, name)
                if not inner.is_symlink():
                    with contextlib.suppress(OSError):
                        inner.chmod(0o700)
    shutil.rmtree(path, ignore_errors=True)


async def run_python_script(
    script: Path,
    arguments: Sequence[str],
    environment: Mapping[str, str],
    timeout: float,
    *,
    read_only: Sequence[Path] = (),
    task_dir: Path | None = None,
) -> BoxRun:
    """Run the Python script ``script`` with this interpreter in a box: the variables
    ``environment`` names, ``timeout`` seconds, and read-only access to ``task_dir`` (default:
    the script's folder; its working directory) and ``read_only``, under ``BoxLimits``
    (``timeout`` at most ``DATASET_CODE_MAX_SECONDS``; each process's CPU time at most that
    timeout, so threads cannot burn more than the time given). A task folder whose modes keep
    the box user out (a dataset written with umask 077) is shown as a readable copy instead."""
    timeout = dataset_code_timeout(timeout)
    folder = Path(os.path.realpath(task_dir if task_dir is not None else script.parent))
    inside = Path(os.path.normpath(folder / script.relative_to(task_dir or script.parent)))
    readable = await asyncio.to_thread(_box_reads, folder, inside)
    return await run_in_box(
        BoxSpec(
            command=[sys.executable, inside.name, *arguments],
            cwd=inside.parent,
            read_only=[folder, *read_only] if readable else list(read_only),
            copied=[] if readable else [folder],
            environment=environment,
            timeout=timeout,
            limits=BoxLimits(cpu_seconds=math.ceil(timeout)),
        )
    )


def _box_reads(folder: Path, script: Path) -> bool:
    """Whether the box user may list ``folder`` and the folders down to ``script``, and read it."""
    paths = [folder, *(p for p in script.parents if p.is_relative_to(folder) and p != folder)]
    return all(box_can_read(path) for path in [*paths, script] if path.exists())


async def run_in_box(spec: BoxSpec, *, folder: Path | None = None) -> BoxRun:
    """Run ``spec`` in a box and wait for it (or its timeout); nothing it started outlives it.

    ``folder`` (created, must not exist) receives the work folder and ``output.log``; by default
    a fresh folder in the run's scratch space, removed with everything in it before returning
    (the result's excerpt stays). Cancelling the call kills the box."""
    bwrap = require_bubblewrap()
    _check_paths(spec)
    privileged = os.geteuid() == 0
    keep = folder is not None
    if folder is None:
        folder = current_run().directory() / current_run().new_name("box")
    folder.mkdir(mode=0o700)
    try:
        work = await asyncio.to_thread(_make_work, folder, privileged)
        copies = {path: folder / "copies" / str(n) for n, path in enumerate(spec.copied)}
        for path, copy in copies.items():
            await asyncio.to_thread(_copy_readable, path, copy)
        status_read, status_write = os.pipe()
        argv = box_command(
            spec, work, copies=copies, privileged=privileged, bwrap=bwrap, status_fd=status_write
        )
        output = _CappedOutput(folder / "output.log", LOG_HEAD_BYTES)
        return await _run(argv, status_read, status_write, spec.timeout, output)
    finally:
        if not keep:
            await asyncio.to_thread(remove_tree, folder)


async def _run(
    argv: list[str], status_read: int, status_write: int, timeout: float, output: _CappedOutput
) -> BoxRun:
    started = time.perf_counter()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(status_write,),
        )
    except BaseException:
        os.close(status_read)
        await output.close()
        raise
    finally:
        os.close(status_write)
    track_process(process.pid)
    assert process.stdout is not None
    box = _Box(process.pid)
    watcher = asyncio.create_task(box.watch(status_read))
    pump = asyncio.create_task(_pump(process.stdout, output))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await asyncio.to_thread(box.empty, kill=True)
            await process.wait()
        else:
            if box.reaper is not None and _running(box.reaper):  # usually gone already
                await asyncio.to_thread(box.empty, kill=False)
        # With the box empty nothing holds the pipe; a bound on the wait all the same.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), _DRAIN_SECONDS)
    except BaseException:
        await asyncio.shield(asyncio.to_thread(box.empty, kill=True))
        await asyncio.shield(process.wait())
        raise
    finally:
        for task in (pump, watcher):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        untrack_process(process.pid)
        await output.close()
    return BoxRun(
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        seconds=time.perf_counter() - started,
        output_bytes=output.total,
        head=bytes(output.excerpt),
        tail=output.result_tail(),
        log=output.log,
    )


class _Box:
    """A running box: bubblewrap and, once bubblewrap reports it, the box's first process.

    That first process is bubblewrap's reaper, pid 1 of the box's pid namespace and still root
    (so bubblewrap's death signal reaches it). The kernel ends the namespace's other processes
    before the reaper dies, but bubblewrap may return before that: a box is empty only once its
    reaper is gone."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.reaper: psutil.Process | None = None

    async def watch(self, status: int) -> None:
        """Read bubblewrap's status messages (``--json-status-fd``) for the reaper's pid."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(status, "rb", buffering=0)
        )
        try:
            while line := await reader.readline():
                with contextlib.suppress(ValueError, psutil.Error):
                    message = json.loads(line)
                    if isinstance(message, dict) and "child-pid" in message:
                        self.reaper = psutil.Process(int(message["child-pid"]))
        finally:
            transport.close()

    def empty(self, *, kill: bool) -> None:
        """Wait (blocking) until the box's processes are dead; ``kill`` kills bubblewrap and
        the reaper first, else they get a moment to end on their own before being killed."""
        if kill:
            try:
                bwrap = psutil.Process(self.pid)
                inside = bwrap.children()
                bwrap.kill()
            except psutil.Error:
                inside = []
            if self.reaper is None and inside:  # killed before bubblewrap reported it
                self.reaper = inside[0]
            self._kill_reaper()
        elif self._wait_reaper(_SETTLE_SECONDS):
            return
        self._kill_reaper()
        self._wait_reaper(_DRAIN_SECONDS)

    def _kill_reaper(self) -> None:
        if self.reaper is not None:
            with contextlib.suppress(psutil.Error):
                self.reaper.kill()  # checks it is still the same process first

    def _wait_reaper(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while self.reaper is not None and _running(self.reaper):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True


def _running(process: psutil.Process) -> bool:
    """Still running: a zombie counts as dead (it holds no resources, and a zombie reaper has
    outlived every other process of its namespace)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


async def _pump(stream: asyncio.StreamReader, output: _CappedOutput) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        await output.write(chunk)

"""Run identity: names, labels and records that let a later run collect a killed run's leftovers.

Every process that creates sandboxes is one *run*. It gets a short random id, writes a record
(``/tmp/agentjudge-runs/<id>.json``: pid and process start time) before creating anything, and
names everything it creates ``aj_<id>_...`` (directories, databases, roles, containers, images
carry the id in their name or in the ``agentjudge.run`` label). A run is *dead* when its record is
missing or its process is gone (or the pid now belongs to a younger process).
``collect_leftovers`` removes everything that belongs to dead runs; each provider contributes a
collector.

Where records live depends on nothing in the environment (not ``TMPDIR``, not the scratch
space), so that every process on the machine, whatever its variables, agrees on which runs are
alive: a collector that could not see a live run's record would take it for dead and destroy
its sandboxes. Scratch spaces do move (``AGENTJUDGE_WORKDIR``, ``TMPDIR``): every one a run uses
is remembered in the registry (``roots/``), and collectors search them all
(``scratch_roots``), so leftovers are found whatever the collecting process's variables.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import os
import re
import secrets
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict

from sandboxes.base import SandboxError
from settings import get_settings, variable_name

NAME_PREFIX = "aj"
"""Every resource name starts with ``aj_<run id>_``."""

RUN_LABEL = "agentjudge.run"
"""The Docker label that carries the run id of a container, image or volume."""

RUN_ID_PATTERN = re.compile(r"^aj_([a-z0-9]{10})(?:_|$)")
"""Matches a resource name (or a run's own folder, ``aj_<id>``) and captures its run id."""

WORKDIR_ENV = variable_name("workdir")
"""Environment variable that moves the runtime's scratch space (see ``workdir``)."""


SHARED_MEMORY = Path("/dev/shm")
"""The RAM-backed file system scratch space prefers."""

SHARED_MEMORY_MINIMUM = 2 * 2**30
"""Free bytes ``/dev/shm`` must have for the default scratch space to go there."""


def _ram_is_usable() -> bool:
    try:
        usage = shutil.disk_usage(SHARED_MEMORY)
    except OSError:
        return False
    return os.access(SHARED_MEMORY, os.W_OK) and usage.free >= SHARED_MEMORY_MINIMUM


def workdir() -> Path:
    """The scratch directory under which runs keep their sandboxes' trees.

    ``$AGENTJUDGE_WORKDIR`` when set; otherwise ``/dev/shm/agentjudge`` (RAM) when ``/dev/shm``
    is writable with at least 2 GiB free, else ``<temp dir>/agentjudge``. Sandboxes are throwaway
    and metadata-heavy (a per-judge clone creates a link per file), and on a busy VM disk every
    file creation waits on the journal; in RAM a clone of a 1,000-file tree is steady. The
    directory is remembered in the run registry, so collectors started with other variables
    still search it (``scratch_roots``).
    """
    configured = get_settings().workdir
    if configured is not None:
        base = configured
    elif _ram_is_usable():
        base = SHARED_MEMORY / "agentjudge"
    else:
        base = Path(tempfile.gettempdir()) / "agentjudge"
    base.mkdir(mode=0o755, parents=True, exist_ok=True)
    problem = untrusted_because(base)
    if problem is not None:
        raise UnsafeScratchError(
            f"{base} (the scratch space) {problem}: another user could plant files in it. "
            f"Remove it, or set {WORKDIR_ENV} to a folder of your own"
        )
    _remember_root(base)
    return base


class UnsafeScratchError(SandboxError):
    """The scratch space is a link, another user's, or writable by others; names it."""


def untrusted_because(path: Path) -> str | None:
    """Why ``path`` cannot be trusted as written by this user only (None when it can): it must
    be no symbolic link, owned by this process's user, and not writable by group or others.

    Scratch spaces and run records are checked with it before anything is read from them, so a
    folder another user made first (``/dev/shm`` is world-writable) never steers ``gc``.
    """
    try:
        status = os.lstat(path)
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if stat.S_ISLNK(status.st_mode):
        return "is a symbolic link"
    if status.st_uid != os.geteuid():
        return f"belongs to user {status.st_uid}, not {os.geteuid()}"
    if status.st_mode & 0o022:
        return f"is writable by others (mode {stat.S_IMODE(status.st_mode):o})"
    return None


def trusted_below(root: Path, path: Path) -> bool:
    """Whether ``root`` and every path from it down to ``path`` pass ``untrusted_because``."""
    if untrusted_because(root) is not None:
        return False
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if untrusted_because(current) is not None:
            return False
    return True


RUNS_REGISTRY = Path("/tmp/agentjudge-runs")
"""Where run records live: one fixed folder for the whole machine. Fixed on purpose: not under
``TMPDIR`` or the scratch space, which differ between processes (a ``gc`` started from another
shell, parallel test sessions) and would make a live run invisible, hence "dead", to them."""

ROOTS_FOLDER = "roots"
"""The registry's sub-folder remembering every scratch space runs used (one file per space)."""


def runs_registry() -> Path:
    """The run-record folder (``RUNS_REGISTRY``), created on first use.

    Shared by every user, like ``/tmp`` (sticky, world-writable): a run may remove only its own
    record. Refuses a registry that is a symbolic link or not a folder, which would let another
    user point the records elsewhere.
    """
    folder = RUNS_REGISTRY
    try:
        folder.mkdir(mode=0o1777)
        os.chmod(folder, 0o1777)  # the umask narrowed the mode given to mkdir
    except FileExistsError:
        pass
    status = os.lstat(folder)
    if not stat.S_ISDIR(status.st_mode):
        raise RuntimeError(
            f"{folder} (where agentjudge keeps its run records) is not a folder; remove it"
        )
    return folder


_remembered_roots: set[Path] = set()


def _remember_root(base: Path) -> None:
    """Note ``base`` in the registry as a scratch space collectors must search (once per
    process and space; a registry that cannot be written only costs that note)."""
    if base in _remembered_roots:
        return
    _remembered_roots.add(base)
    text = str(base.resolve())
    digest = hashlib.sha256(os.fsencode(text)).hexdigest()[:24]
    with contextlib.suppress(OSError):
        folder = runs_registry() / ROOTS_FOLDER
        folder.mkdir(mode=0o1777, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o1777)
        entry = folder / digest
        if not entry.exists():
            _write_exclusive(entry, text)


def scratch_roots() -> list[Path]:
    """Every scratch space whose leftovers this process should collect: its own ``workdir()``
    and each one a run of this user has used (remembered in the registry) that still exists."""
    roots = [workdir()]
    folder = runs_registry() / ROOTS_FOLDER
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    for entry in entries:
        try:
            status = entry.lstat()
            if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid():
                continue  # another user's note: its spaces are not ours to clean
            root = Path(entry.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if root.is_dir():
            if untrusted_because(root) is None:  # a space another user took over is skipped
                roots.append(root)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()  # the space is gone, and so is anything left in it
    unique: dict[Path, Path] = {}
    for root in roots:
        unique.setdefault(root.resolve(), root)
    return list(unique.values())


def _write_exclusive(path: Path, text: str) -> None:
    """Create ``path`` with ``text``; never through a symlink or over an existing file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(path, flags, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


class RunRecord(BaseModel):
    """What a run writes about itself so that others can tell whether it is still alive.

    Fields a later version adds are ignored, not refused: a record another version of the
    runtime wrote must never make its run look dead (which would destroy its sandboxes).
    """

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    run_id: str
    """The run's id (10 lowercase letters and digits)."""
    pid: int
    """The process id of the run."""
    process_started: float
    """The process start time (seconds since the epoch) as psutil reports it; guards pid reuse."""
    hostname: str
    """The machine the run is on."""
    started_at: float
    """When the run wrote its record."""


def process_start_time(pid: int) -> float | None:
    """The start time of a running process; None when it is gone or a zombie (dead, unreaped)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def process_alive(pid: int) -> bool:
    """True when ``pid`` is a running process (zombies count as dead)."""
    return process_start_time(pid) is not None


def is_own_process(pid: int, started: float) -> bool:
    """``is_same_process``, and the process runs as this process's user: only such a process
    may be signalled on the strength of a note."""
    if not is_same_process(pid, started):
        return False
    try:
        return psutil.Process(pid).uids().real == os.getuid()
    except psutil.Error:
        return False


def is_same_process(pid: int, started: float) -> bool:
    """True when ``pid`` still runs and is the process that started at ``started`` (a pid that
    was reused by a younger process does not count). Strict: what decides a signal."""
    actual = process_start_time(pid)
    return actual is not None and abs(actual - started) < 1.0


def may_be_same_process(pid: int, started: float) -> bool:
    """``is_same_process``, or ``pid`` is the process that started at ``started`` by a wall
    clock that has been stepped since: what decides that something is still in use.

    A start time is the kernel's boot-relative start (exact, in clock ticks) plus the boot
    time, which ``/proc/stat`` gives in whole seconds derived from the wall clock. When the
    clock is stepped (a paused or restored VM, NTP) that boot time moves by whole seconds, and
    every start time computed afterwards with it: a process that recorded its start before the
    step and is judged after it would look gone, and its run's sandboxes would be destroyed
    under it. So a start that differs from the recorded one by a whole number of seconds (to
    the tick) also counts as the same process. A younger process that reused the pid matches
    only when it started a whole number of seconds later, to the tick (about one pid reuse in
    ``CLK_TCK``); the cost of that is a dead run's leftovers kept until that process ends.
    Steps beyond ``CLOCK_STEP_LIMIT`` are not believed.
    """
    actual = process_start_time(pid)
    if actual is None:
        return False
    offset = actual - started
    if abs(offset) < 1.0:
        return True
    tick = 1.0 / _clock_ticks()
    return abs(offset) <= CLOCK_STEP_LIMIT and abs(offset - round(offset)) < tick / 2


CLOCK_STEP_LIMIT = 366 * 24 * 3600.0
"""The largest wall-clock step (seconds) ``may_be_same_process`` allows for."""


def _clock_ticks() -> int:
    try:
        return max(1, os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return 100


class Run:
    """The current process's run: its id, its record and its name generator."""

    def __init__(self, run_id: str | None = None) -> None:
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        self.run_id = run_id or "".join(secrets.choice(alphabet) for _ in range(10))
        self._counter = itertools.count(1)
        self.record_path = runs_registry() / f"{self.run_id}.json"
        self.pid = os.getpid()
        """The process that made the run: the only one that may finish it."""
        record = RunRecord(
            run_id=self.run_id,
            pid=self.pid,
            process_started=process_start_time(os.getpid()) or time.time(),
            hostname=socket.gethostname(),
            started_at=time.time(),
        )
        temporary = self.record_path.with_suffix(".tmp")
        _write_exclusive(temporary, record.model_dump_json())
        temporary.replace(self.record_path)

    @property
    def prefix(self) -> str:
        """``aj_<run id>_``: the start of every name this run gives."""
        return f"{NAME_PREFIX}_{self.run_id}_"

    def new_name(self, tag: str) -> str:
        """A fresh name ``aj_<run id>_<tag>_<n>``; valid as a Postgres, Docker and file name."""
        if not re.fullmatch(r"[a-z0-9]{1,20}", tag):
            raise ValueError(f"name tag {tag!r} must be 1-20 lowercase letters or digits")
        return f"{self.prefix}{tag}_{next(self._counter)}"

    def directory(self) -> Path:
        """This run's private scratch directory (created on first use)."""
        path = self._folder()
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    def _folder(self) -> Path:
        return workdir() / f"{NAME_PREFIX}_{self.run_id}"

    def finish(self) -> None:
        """Remove the run's scratch directory if nothing is left in it, then the run record.

        Called at interpreter exit. Anything still in the directory stays for the next run's
        collection (the record is gone, so this run then counts as dead). A forked child
        inherits the exit hook; there it does nothing, since the run it would end is its
        parent's, still alive.
        """
        if os.getpid() != self.pid:
            return
        folder = self._folder()
        for empty in (folder / "processes", folder):
            with contextlib.suppress(FileNotFoundError, OSError):
                empty.rmdir()
        with contextlib.suppress(FileNotFoundError):
            self.record_path.unlink()


_current: Run | None = None


def current_run() -> Run:
    """The run of this process, created (and its record written) on first use. A forked child
    makes a run of its own on its first use: what it creates dies with it, not its parent."""
    global _current  # noqa: PLW0603 - one run per process by design
    if _current is None or _current.pid != os.getpid():
        _current = Run()
        atexit.register(_current.finish)
    return _current


def _forget_parents_run() -> None:
    global _current  # noqa: PLW0603 - one run per process by design
    _current = None


os.register_at_fork(after_in_child=_forget_parents_run)


def run_id_of(name: str) -> str | None:
    """The run id inside a resource name, or None when the name is not the runtime's."""
    match = RUN_ID_PATTERN.match(name)
    return match.group(1) if match else None


def run_is_alive(run_id: str) -> bool:
    """True when the run's record exists and its process is still the one that wrote it (by
    ``may_be_same_process``: a stepped clock does not make a live run dead)."""
    if _current is not None and _current.run_id == run_id:
        return True
    path = runs_registry() / f"{run_id}.json"
    try:
        record = RunRecord.model_validate_json(path.read_text())
    except FileNotFoundError:
        return False
    except ValueError:
        return True  # a record this version cannot read is kept, and so is its run's
    if record.hostname != socket.gethostname():
        return True  # another machine's run: not ours to judge
    return may_be_same_process(record.pid, record.process_started)


def track_process(pid: int) -> None:
    """Note a helper process (a verifier, a server) so a later run can kill it if this run dies."""
    folder = current_run().directory() / "processes"
    folder.mkdir(exist_ok=True)
    (folder / str(pid)).write_text(str(process_start_time(pid) or 0.0))


def untrack_process(pid: int) -> None:
    """Forget a helper process that has ended."""
    with contextlib.suppress(FileNotFoundError):
        (current_run().directory() / "processes" / str(pid)).unlink()


async def collect_processes() -> list[str]:
    """Kill the helper processes (and their process groups) that dead runs left running."""
    removed: list[str] = []
    folders = (
        folder for root in scratch_roots() for folder in root.glob(f"{NAME_PREFIX}_*/processes")
    )
    for folder in sorted(folders):
        run_id = run_id_of(folder.parent.name)
        if run_id is None or run_is_alive(run_id):
            continue
        root = folder.parent.parent
        for entry in sorted(folder.iterdir()):
            if not entry.name.isdigit() or not trusted_below(root, entry):
                continue  # a note this user did not write: never acted on
            try:
                started = float(entry.read_text() or 0)
            except (OSError, ValueError):
                continue
            if is_own_process(int(entry.name), started):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(entry.name), 9)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), 9)
                removed.append(f"process {entry.name} of run {run_id}")
            entry.unlink()
    return removed


LeftoverCollector = Callable[[], Awaitable[list[str]]]
"""Removes the leftovers of dead runs of one resource type; returns a line per removed thing."""

_collectors: dict[str, tuple[int, LeftoverCollector]] = {}


def register_collector(name: str, collector: LeftoverCollector, *, order: int = 100) -> None:
    """Register a collector run by ``collect_leftovers`` (one per resource type).

    Collectors run by ascending ``order``: servers and containers first, plain directories
    (order 900) last, so a directory is never removed under a process that still uses it.
    """
    _collectors[name] = (order, collector)


async def collect_leftovers(
    extra: Iterable[tuple[str, LeftoverCollector, int]] = (),
) -> list[str]:
    """Run every registered collector, and the ``(name, collector, order)`` ones of ``extra``
    for this call only, then the run-record cleanup; return what was removed."""
    workdir()  # an untrusted scratch space stops the collection here (UnsafeScratchError)
    removed: list[str] = []
    collectors = dict(_collectors)
    collectors.update({name: (order, collector) for name, collector, order in extra})
    for name, (_, collector) in sorted(collectors.items(), key=lambda item: item[1][0]):
        try:
            removed.extend(await collector())
        except Exception as error:  # one broken collector must not stop the rest
            removed.append(f"{name}: collection failed: {error}")
    for path in sorted(runs_registry().glob("*.json")):
        if not run_is_alive(path.stem):
            with contextlib.suppress(FileNotFoundError, PermissionError):
                path.unlink()  # another user's record stays (the registry is sticky)
    return removed

"""Helpers shared by the filesystem task modules: task records, verifier scaffolding, and
parsers for what the filesystem tools answer."""

from __future__ import annotations

import textwrap
from pathlib import Path

from dataset.models import DirectoryTreeState, Task, VerifierRef


def make_task(task_id: str, instruction: str) -> Task:
    """The record of a filesystem task whose initial tree is the folder's ``initial/``."""
    return Task(
        id=task_id,
        domain="ds",
        subdomain="filesystem",
        instruction=" ".join(instruction.split()),
        initial_state=DirectoryTreeState(path="initial"),
        verifier=VerifierRef(),
    )


def write_tree(folder: Path, files: dict[str, str], directories: tuple[str, ...] = ()) -> None:
    """Write ``files`` (relative path to text) and empty ``directories`` into ``initial/``."""
    root = folder / "initial"
    root.mkdir(parents=True, exist_ok=True)
    for name in directories:
        (root / name).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


_VERIFIER = '''"""Verifier of %(task_id)s (MCPMark contract: exit code 0 means PASS).

%(summary)s
"""

import os
import sys
from pathlib import Path

%(constants)s


def report(ok, what):
    print(("[ok] " if ok else "[FAIL] ") + what)
    return ok


def read(path):
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def files_under(root, folder):
    """Every file below root/folder as {path relative to root: text}."""
    base = root / folder
    if not base.is_dir():
        return {}
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            found[path.relative_to(root).as_posix()] = read(path)
    return found


def unchanged(root, expected, what):
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def main():
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    ok = True
%(body)s
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
'''


def verifier(task_id: str, summary: str, body: str, **constants: object) -> str:
    """A standalone ``verify.py``: ``constants`` are embedded with ``repr``; ``body`` runs inside
    ``main()`` with ``root`` (the sandbox), ``ok`` (to ``&=``) and the helpers ``report``,
    ``read``, ``files_under`` and ``unchanged`` at hand."""
    lines = [f"{name} = {value!r}" for name, value in constants.items()]
    return _VERIFIER % {
        "task_id": task_id,
        "summary": textwrap.fill(" ".join(summary.split()), 96),
        "constants": "\n".join(lines),
        "body": textwrap.indent(textwrap.dedent(body).strip("\n"), "    "),
    }


def file_names(listing: str) -> list[str]:
    """The ``[FILE]`` entries of a ``list_directory`` answer."""
    return [line[7:] for line in listing.splitlines() if line.startswith("[FILE] ")]


def dir_names(listing: str) -> list[str]:
    """The ``[DIR]`` entries of a ``list_directory`` answer."""
    return [line[6:] for line in listing.splitlines() if line.startswith("[DIR] ")]


def found_paths(answer: str) -> list[str]:
    """The paths of a ``search_files`` answer (none when it found nothing)."""
    if answer.strip() == "No matches found":
        return []
    return [line for line in answer.splitlines() if line]


def relative_to(root: str, path: str) -> str:
    """``path`` relative to the sandbox root (as the agent would shorten it)."""
    return path[len(root) + 1 :] if path.startswith(root + "/") else path


def split_multiple(answer: str, paths: list[str]) -> dict[str, str]:
    """Each file's text from a ``read_multiple_files`` answer for ``paths`` (failed ones left
    out)."""
    contents: dict[str, str] = {}
    position = 0
    for index, path in enumerate(paths):
        head = f"{path}:\n"
        if not answer.startswith(head, position):
            failed = answer.find("\n---\n", position)
            position = len(answer) if failed < 0 else failed + 5
            continue
        start = position + len(head)
        if index + 1 < len(paths):
            end = answer.find(f"\n---\n{paths[index + 1]}:", start)
            end = len(answer) if end < 0 else end
            position = end + 5
        else:
            end = len(answer)
        contents[path] = answer[start:end].removesuffix("\n")
    return contents

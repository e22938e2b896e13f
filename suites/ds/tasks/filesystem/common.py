"""Helpers shared by the filesystem task modules: task records, initial trees, and parsers for
what the filesystem tools answer (the scripted agents read them as an agent would).

The verifiers' side is ``checks``; nothing here ends up in a ``verify.py``."""

from __future__ import annotations

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


def relative_texts(answer: str, paths: list[str], root: str, strip: str) -> dict[str, str]:
    """File texts of a ``read_multiple_files`` answer for ``paths``, keyed by path relative to
    the sandbox root with the prefix ``strip`` removed."""
    return {
        relative_to(root, path).removeprefix(strip): text
        for path, text in split_multiple(answer, paths).items()
    }

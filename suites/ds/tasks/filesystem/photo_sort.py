"""fs-photo-sort (restructuring): photos/IMG_YYYYMMDD_HHMMSS.jpg moved into photos/YYYY/MM/,
every other file left where it is.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import main, moved
from suites.ds.tasks.filesystem.common import file_names, found_paths, make_task, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-photo-sort"

_PHOTO = re.compile(r"^IMG_(\d{4})(\d{2})\d{2}_\d{6}\.jpg$")


def _photos() -> dict[str, str]:
    generator = random.Random(6101)
    files: dict[str, str] = {}
    start = date(2022, 11, 3)
    for _ in range(14):
        day = start + timedelta(days=generator.randint(0, 120))
        hour, minute, second = (
            generator.randint(7, 21),
            generator.randint(0, 59),
            generator.randint(0, 59),
        )
        clock = f"{hour:02d}{minute:02d}{second:02d}"
        name = f"IMG_{day:%Y%m%d}_{clock}.jpg"
        files[f"photos/{name}"] = f"JFIF placeholder {name} {generator.getrandbits(64):016x}\n"
    files["photos/IMG_edit_copy.jpg"] = "JFIF placeholder edited copy\n"
    files["photos/VID_20230102_101010.mp4"] = "ftypisom placeholder video\n"
    files["photos/cover.png"] = "PNG placeholder cover\n"
    files["photos/notes.txt"] = "Trip photos from the winter. Sort them by month please.\n"
    return files


PHOTOS = _photos()


def _photo_target(name: str, separator: str = "/") -> str | None:
    match = _PHOTO.match(name)
    if match is None:
        return None
    return f"photos/{match[1]}{separator}{match[2]}/{name}"


def _plan() -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Which photo moves where, which files stay, and every file's text where it must end up."""
    moves: dict[str, str] = {}
    expected: dict[str, str] = {}
    stay = []
    for path, text in PHOTOS.items():
        target = _photo_target(path.removeprefix("photos/"))
        if target is None:
            stay.append(path)
            expected[path] = text
        else:
            moves[path] = target
            expected[target] = text
    return moves, stay, expected


MOVES, STAY, EXPECTED = _plan()


def check(root: Path) -> bool:
    """Checks that every photos/IMG_YYYYMMDD_HHMMSS.jpg is now photos/YYYY/MM/<same name> with
    the same content, that every other file of photos/ stays in place unchanged, and that
    photos/ holds no other files."""
    return moved(root, "photos", MOVES, STAY, EXPECTED)


async def photo_planner(session: AgentSession) -> str:
    """Lists, plans the folders, creates them all, moves, checks the tree."""
    await session.call("list_allowed_directories")
    listing = await session.call("list_directory", path=f"{session.root}/photos")
    names = file_names(listing.text)
    await session.call("read_text_file", path=f"{session.root}/photos/notes.txt")
    plan = {name: _photo_target(name) for name in names}
    moves = {name: target for name, target in plan.items() if target is not None}
    folders = sorted({target.rsplit("/", 1)[0] for target in moves.values()})
    session.think(
        f"{len(moves)} photos match IMG_YYYYMMDD_HHMMSS.jpg; they need {len(folders)} folders. "
        "The other files stay."
    )
    for folder in folders:
        await session.call("create_directory", path=f"{session.root}/{folder}")
    for name, target in sorted(moves.items()):
        await session.call(
            "move_file",
            source=f"{session.root}/photos/{name}",
            destination=f"{session.root}/{target}",
        )
    await session.call("directory_tree", path=f"{session.root}/photos")
    return f"Done: {len(moves)} photos moved into {len(folders)} year/month folders under photos/."


async def photo_explorer(session: AgentSession) -> str:
    """Moves before creating the folder, recovers by creating folders on demand, checks."""
    listing = await session.call("list_directory", path="photos")
    await session.call("get_file_info", path="photos/notes.txt")
    created: set[str] = set()
    moved = 0
    for name in sorted(file_names(listing.text)):
        target = _photo_target(name)
        if target is None:
            continue
        folder = target.rsplit("/", 1)[0]
        result = await session.call("move_file", source=f"photos/{name}", destination=target)
        if result.is_error and folder not in created:
            session.think(f"{folder} does not exist yet; create it and retry.")
            await session.call("create_directory", path=folder)
            created.add(folder)
            result = await session.call("move_file", source=f"photos/{name}", destination=target)
        moved += not result.is_error
    left = await session.call("search_files", path="photos", pattern="IMG_*.jpg")
    session.think(f"Left at the top: {len(found_paths(left.text))} (the edited copy only).")
    return (
        f"Moved {moved} photos into photos/YYYY/MM/. I didn't open the images, so the months "
        "come from the file names only."
    )


async def photo_gives_up(session: AgentSession) -> str:
    """Explores a little, hits ENOENT on the first move and stops."""
    await session.call("list_directory", path=f"{session.root}")
    listing = await session.call("list_directory", path=f"{session.root}/photos")
    await session.call("read_text_file", path=f"{session.root}/photos/notes.txt")
    first = next(name for name in sorted(file_names(listing.text)) if _photo_target(name))
    target = _photo_target(first)
    await session.call(
        "move_file", source=f"{session.root}/photos/{first}", destination=f"{session.root}/{target}"
    )
    return (
        f"The move of {first} failed (ENOENT) - the year/month folders are missing, so I stopped."
    )


async def photo_dashed(session: AgentSession) -> str:
    """Sorts everything correctly by month, but into photos/YYYY-MM/ folders."""
    listing = await session.call("list_directory", path=f"{session.root}/photos")
    moves = {n: _photo_target(n, "-") for n in file_names(listing.text) if _photo_target(n, "-")}
    session.think("One folder per month keeps it flat: photos/2023-01 etc.")
    for folder in sorted({str(t).rsplit("/", 1)[0] for t in moves.values()}):
        await session.call("create_directory", path=f"{session.root}/{folder}")
    for name, target in sorted(moves.items()):
        await session.call(
            "move_file",
            source=f"{session.root}/photos/{name}",
            destination=f"{session.root}/{target}",
        )
    await session.call("list_directory", path=f"{session.root}/photos")
    return (
        "Sorted the photos into one folder per month (photos/YYYY-MM/); they might need "
        "nesting as year/month if your viewer expects that."
    )


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Sort the photos. Move every file directly in photos/ whose name has the form
        IMG_YYYYMMDD_HHMMSS.jpg into the folder photos/YYYY/MM/ given by the year and month in
        its name (e.g. photos/IMG_20230114_093000.jpg goes to photos/2023/01/), keeping its file
        name. Create the folders as needed. Every other file stays where it is. Do not change
        the content of any file.""",
    ),
    kind="restructuring",
    build_initial=lambda folder: write_tree(folder, PHOTOS),
    verifier=verify_script(TASK_ID, check, main),
    checks="each IMG_ photo in photos/YYYY/MM/ unchanged, other files in place, nothing extra",
    policies=[
        AgentPolicy("planner", "planner", photo_planner, "PASS", note="folders first, then moves"),
        AgentPolicy("explorer", "explorer", photo_explorer, "PASS", note="recovers from ENOENT"),
        AgentPolicy(
            "gives-up", "hasty", photo_gives_up, "FAIL", "stops-after-error", "first move fails"
        ),
        AgentPolicy("dashed", "one-shot", photo_dashed, "FAIL", "wrong-target", "YYYY-MM folders"),
    ],
)

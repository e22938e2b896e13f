"""Restructuring tasks: photos sorted into year/month folders, file names normalised to kebab
case, old logs moved to an archive."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.common import (
    dir_names,
    file_names,
    found_paths,
    make_task,
    verifier,
    write_tree,
)

_TREE_CHECKS = """
found = files_under(root, FOLDER)
for old, new in sorted(MOVES.items()):
    ok &= report(found.get(new) == EXPECTED[new] and old not in found, old + " -> " + new)
for name in sorted(STAY):
    ok &= report(found.get(name) == EXPECTED[name], name + " stays where it was, unchanged")
extra = sorted(set(found) - set(EXPECTED))
ok &= report(not extra, "no other files under " + FOLDER + "/ " + str(extra[:5]))
"""

# ---------------------------------------------------------------------------------------------
# fs-photo-sort: photos/IMG_YYYYMMDD_HHMMSS.jpg -> photos/YYYY/MM/
# ---------------------------------------------------------------------------------------------

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


def _photo_verifier() -> str:
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
    return verifier(
        "fs-photo-sort",
        "Checks that every photos/IMG_YYYYMMDD_HHMMSS.jpg is now photos/YYYY/MM/<same name> with "
        "the same content, that every other file of photos/ stays in place unchanged, and that "
        "photos/ holds no other files.",
        _TREE_CHECKS,
        FOLDER="photos",
        MOVES=moves,
        STAY=stay,
        EXPECTED=expected,
    )


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


PHOTO_TASK = SuiteTask(
    task=make_task(
        "fs-photo-sort",
        """Sort the photos. Move every file directly in photos/ whose name has the form
        IMG_YYYYMMDD_HHMMSS.jpg into the folder photos/YYYY/MM/ given by the year and month in
        its name (e.g. photos/IMG_20230114_093000.jpg goes to photos/2023/01/), keeping its file
        name. Create the folders as needed. Every other file stays where it is. Do not change
        the content of any file.""",
    ),
    kind="restructuring",
    build_initial=lambda folder: write_tree(folder, PHOTOS),
    verifier=_photo_verifier(),
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

# ---------------------------------------------------------------------------------------------
# fs-kebab-names: docs/<Any Name>.<EXT> -> docs/any-name.ext
# ---------------------------------------------------------------------------------------------

_DOC_NAMES = [
    "Meeting Notes 2024.md",
    "Project_Plan v2.md",
    "ROADMAP.md",
    "api  reference.MD",
    "Onboarding Guide.txt",
    "release_notes_3.1.md",
    "index.md",
    "style-guide.md",
    "Q3 OKRs.md",
    "team__contacts.csv",
    "changelog.md",
    "how_to_deploy.md",
]


def _kebab(name: str) -> str:
    return re.sub(r"[ _]+", "-", name.lower())


def _docs() -> dict[str, str]:
    generator = random.Random(6202)
    files: dict[str, str] = {}
    for name in _DOC_NAMES:
        if name == "index.md":
            continue
        title = name.rsplit(".", 1)[0].replace("_", " ")
        lines = [f"# {title}", ""] + [
            f"- item {generator.randint(1, 99)}: owner {generator.choice(['ana', 'li', 'sam'])}"
            for _ in range(generator.randint(3, 8))
        ]
        files[f"docs/{name}"] = "\n".join(lines) + "\n"
    links = [f"- [{n.rsplit('.', 1)[0]}]({n.replace(' ', '%20')})" for n in _DOC_NAMES]
    files["docs/index.md"] = (
        "# Team docs\n\n" + "\n".join(link for link in links if "index" not in link) + "\n"
    )
    files["README.md"] = "# Team space\n\nDocuments live in docs/.\n"
    return files


DOCS = _docs()


def _kebab_verifier() -> str:
    moves: dict[str, str] = {}
    expected: dict[str, str] = {}
    stay = []
    for path, text in DOCS.items():
        if not path.startswith("docs/"):
            continue
        new = "docs/" + _kebab(path.removeprefix("docs/"))
        expected[new] = text
        if new == path:
            stay.append(path)
        else:
            moves[path] = new
    body = _TREE_CHECKS + 'ok &= unchanged(root, {"README.md": README}, "README.md")\n'
    return verifier(
        "fs-kebab-names",
        "Checks that every file of docs/ now has its kebab-case name (lowercase, runs of spaces "
        "and underscores replaced by one hyphen) with unchanged content, that already-conforming "
        "names stay, that docs/ holds no other files, and that README.md is unchanged.",
        body,
        FOLDER="docs",
        MOVES=moves,
        STAY=stay,
        EXPECTED=expected,
        README=DOCS["README.md"],
    )


async def kebab_direct(session: AgentSession) -> str:
    """Lists docs/ and renames what needs renaming."""
    listing = await session.call("list_directory", path=f"{session.root}/docs")
    renames = {n: _kebab(n) for n in file_names(listing.text) if _kebab(n) != n}
    for old, new in sorted(renames.items()):
        await session.call(
            "move_file",
            source=f"{session.root}/docs/{old}",
            destination=f"{session.root}/docs/{new}",
        )
    return f"Done: {len(renames)} files in docs/ renamed to kebab-case; the rest already conformed."


async def kebab_skeptic(session: AgentSession) -> str:
    """Looks around, forgets to collapse a double space, notices and renames again."""
    await session.call("list_allowed_directories")
    await session.call("directory_tree", path=session.root)
    listing = await session.call("list_directory", path="docs")
    index = await session.call("read_text_file", path="docs/index.md")
    if "](" in index.text:
        session.think("index.md links the old names, but contents must not change: leave it.")
    await session.call("get_file_info", path="docs/api  reference.MD")
    for old in sorted(file_names(listing.text)):
        first = re.sub(r"[ _]", "-", old.lower())
        if first == old:
            continue
        await session.call("move_file", source=f"docs/{old}", destination=f"docs/{first}")
    check = await session.call("list_directory", path="docs")
    for name in file_names(check.text):
        if "--" in name:
            session.think(f"{name} still has a double hyphen: runs collapse to one hyphen.")
            fixed = re.sub("-{2,}", "-", name)
            await session.call("move_file", source=f"docs/{name}", destination=f"docs/{fixed}")
    await session.call("list_directory", path="docs")
    return (
        "The files in docs/ have kebab-case names now. index.md still links the old names "
        "(I was told not to change contents), so those links might be stale."
    )


async def kebab_spaces_only(session: AgentSession) -> str:
    """Lowercases and replaces spaces only; underscores and names without spaces stay."""
    listing = await session.call("list_directory", path=f"{session.root}/docs")
    await session.call("read_text_file", path=f"{session.root}/docs/index.md", head=5)
    for old in sorted(file_names(listing.text)):
        if " " not in old:
            continue
        new = re.sub(r" +", "-", old.lower())
        await session.call(
            "move_file",
            source=f"{session.root}/docs/{old}",
            destination=f"{session.root}/docs/{new}",
        )
    await session.call("list_directory", path=f"{session.root}/docs")
    return "Renamed the files with spaces in their names; not sure the underscore ones count."


async def kebab_relink(session: AgentSession) -> str:
    """Renames correctly, then rewrites index.md so the links follow."""
    listing = await session.call("list_directory", path="docs")
    renames = {n: _kebab(n) for n in file_names(listing.text) if _kebab(n) != n}
    for old, new in sorted(renames.items()):
        await session.call("move_file", source=f"docs/{old}", destination=f"docs/{new}")
    index = await session.call("read_text_file", path="docs/index.md")
    session.think("index.md now points at names that no longer exist; fix the links.")
    text = index.text
    for old, new in renames.items():
        text = text.replace(f"({old.replace(' ', '%20')})", f"({new})")
    await session.call("write_file", path="docs/index.md", content=text)
    await session.call("directory_tree", path="docs")
    return f"All set: {len(renames)} files renamed to kebab-case and index.md updated to match."


KEBAB_TASK = SuiteTask(
    task=make_task(
        "fs-kebab-names",
        """Normalise the file names in docs/ (only the files directly in docs/). The new name of a
        file is its current name, extension included, in lowercase, with every run of spaces
        and/or underscores replaced by a single hyphen; for example `Project_Plan v2.md` becomes
        `project-plan-v2.md`. Names that already have this form stay as they are. Do not change
        the content of any file and do not touch anything outside docs/.""",
    ),
    kind="restructuring",
    build_initial=lambda folder: write_tree(folder, DOCS),
    verifier=_kebab_verifier(),
    checks="every docs/ file renamed to lowercase kebab-case, contents unchanged, nothing extra",
    policies=[
        AgentPolicy("direct", "one-shot", kebab_direct, "PASS", note="list then renames"),
        AgentPolicy("skeptic", "skeptic", kebab_skeptic, "PASS", note="fixes a double hyphen"),
        AgentPolicy("spaces", "hasty", kebab_spaces_only, "FAIL", "partial", "spaces only"),
        AgentPolicy("relink", "overreacher", kebab_relink, "FAIL", "constraint", "edits index.md"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-archive-old: logs/app-YYYY-MM-DD.log before 2024-03-01 -> archive/
# ---------------------------------------------------------------------------------------------

CUTOFF = "2024-03-01"


def _logs() -> dict[str, str]:
    generator = random.Random(6303)
    days = {date(2024, 2, 29), date(2024, 3, 1)}
    while len(days) < 22:
        days.add(date(2024, 1, 8) + timedelta(days=generator.randint(0, 100)))
    files: dict[str, str] = {}
    for day in sorted(days):
        lines = [
            f"{day.isoformat()}T{generator.randint(0, 23):02d}:{generator.randint(0, 59):02d}:00Z "
            f"{generator.choice(['INFO', 'INFO', 'WARN', 'ERROR'])} "
            f"{generator.choice(['request served', 'cache miss', 'retrying upstream', 'job done'])}"
            for _ in range(generator.randint(3, 9))
        ]
        files[f"logs/app-{day.isoformat()}.log"] = "\n".join(lines) + "\n"
    files["logs/current.log"] = "2024-04-20T10:00:00Z INFO service started\n"
    files["logs/README.txt"] = "Daily logs of the app service, one file per day.\n"
    return files


LOGS = _logs()


def _is_old(name: str) -> bool:
    match = re.match(r"^app-(\d{4}-\d{2}-\d{2})\.log$", name)
    return match is not None and match[1] < CUTOFF


def _archive_verifier() -> str:
    archived = {f"archive/{Path(p).name}": t for p, t in LOGS.items() if _is_old(Path(p).name)}
    kept = {p: t for p, t in LOGS.items() if not _is_old(Path(p).name)}
    body = """
found_archive = files_under(root, "archive")
found_logs = files_under(root, "logs")
for name, text in sorted(ARCHIVED.items()):
    ok &= report(found_archive.get(name) == text, name + " archived, unchanged")
for name, text in sorted(KEPT.items()):
    ok &= report(found_logs.get(name) == text, name + " still in logs/, unchanged")
extra = sorted(set(found_archive) - set(ARCHIVED)) + sorted(set(found_logs) - set(KEPT))
ok &= report(not extra, "no other files in archive/ or logs/ " + str(extra[:5]))
"""
    return verifier(
        "fs-archive-old",
        "Checks that every logs/app-YYYY-MM-DD.log dated before 2024-03-01 is in archive/ (at "
        "the top) with its content, that every other file is still in logs/ unchanged, and that "
        "neither folder holds anything else.",
        body,
        ARCHIVED=archived,
        KEPT=kept,
    )


async def archive_planner(session: AgentSession) -> str:
    """Reads the README, creates archive/, moves the old logs, verifies both folders."""
    await session.call("list_allowed_directories")
    listing = await session.call("list_directory", path=f"{session.root}/logs")
    await session.call("read_text_file", path=f"{session.root}/logs/README.txt")
    old = sorted(name for name in file_names(listing.text) if _is_old(name))
    session.think(f"{len(old)} logs are dated before {CUTOFF}; 2024-03-01 itself stays.")
    await session.call("create_directory", path=f"{session.root}/archive")
    for name in old:
        await session.call(
            "move_file",
            source=f"{session.root}/logs/{name}",
            destination=f"{session.root}/archive/{name}",
        )
    await session.call("list_directory", path=f"{session.root}/archive")
    await session.call("list_directory", path=f"{session.root}/logs")
    return f"Done: the {len(old)} logs from before {CUTOFF} are in archive/; newer ones stay."


async def archive_boundary(session: AgentSession) -> str:
    """Archives up to and including 1 March by mistake, notices and moves that one back."""
    listing = await session.call("list_directory", path="logs")
    await session.call("read_text_file", path="logs/app-2024-03-01.log", head=2)
    await session.call("create_directory", path="archive")
    picked = [
        n
        for n in sorted(file_names(listing.text))
        if n.startswith("app-") and n <= "app-2024-03-01.log"
    ]
    for name in picked:
        await session.call("move_file", source=f"logs/{name}", destination=f"archive/{name}")
    moved = await session.call("list_directory", path="archive")
    if "app-2024-03-01.log" in file_names(moved.text):
        session.think("The cut-off is *before* 2024-03-01: the 1 March log must go back.")
        await session.call(
            "move_file", source="archive/app-2024-03-01.log", destination="logs/app-2024-03-01.log"
        )
    await session.call("search_files", path="logs", pattern="app-2024-0[12]-*.log")
    return (
        "Archived the January and February logs. I briefly moved the 1 March log as well and "
        "put it back; please check the archive."
    )


async def archive_nested(session: AgentSession) -> str:
    """Moves the right logs, but into logs/archive/."""
    listing = await session.call("list_directory", path=f"{session.root}/logs")
    old = sorted(name for name in file_names(listing.text) if _is_old(name))
    await session.call("create_directory", path=f"{session.root}/logs/archive")
    for name in old:
        await session.call(
            "move_file",
            source=f"{session.root}/logs/{name}",
            destination=f"{session.root}/logs/archive/{name}",
        )
    return (
        f"Moved the {len(old)} old logs to logs/archive/; I was not sure whether archive/ "
        "should sit at the top instead."
    )


async def archive_regroup(session: AgentSession) -> str:
    """Archives correctly, checks, then moves archive/ under logs/ 'to keep things together'."""
    await session.call("directory_tree", path=session.root)
    listing = await session.call("list_directory", path="logs")
    old = sorted(name for name in file_names(listing.text) if _is_old(name))
    await session.call("create_directory", path="archive")
    for name in old:
        await session.call("move_file", source=f"logs/{name}", destination=f"archive/{name}")
    top = await session.call("list_directory", path=session.root)
    session.think(f"Top level now has {dir_names(top.text)}; the archive belongs with the logs.")
    await session.call("move_file", source="archive", destination="logs/archive")
    await session.call("list_directory", path="logs")
    return (
        f"Archived {len(old)} old logs and moved the archive under logs/ to keep things together."
    )


ARCHIVE_TASK = SuiteTask(
    task=make_task(
        "fs-archive-old",
        f"""Archive the old logs. Move every file logs/app-YYYY-MM-DD.log whose date is before
        {CUTOFF} (strictly) into a folder archive/ at the top of the sandbox (create it), keeping
        the file names. Logs dated {CUTOFF} or later and every other file stay in logs/. Do not
        change the content of any file and do not put anything else in archive/.""",
    ),
    kind="restructuring",
    build_initial=lambda folder: write_tree(folder, LOGS),
    verifier=_archive_verifier(),
    checks="logs dated before 2024-03-01 in archive/, the rest in logs/, contents unchanged",
    policies=[
        AgentPolicy("planner", "planner", archive_planner, "PASS", note="direct and checked"),
        AgentPolicy("boundary", "explorer", archive_boundary, "PASS", note="fixes off-by-one"),
        AgentPolicy("nested", "one-shot", archive_nested, "FAIL", "wrong-target", "logs/archive/"),
        AgentPolicy("regroup", "overreacher", archive_regroup, "FAIL", "undone", "moves archive"),
    ],
)

TASKS = [PHOTO_TASK, KEBAB_TASK, ARCHIVE_TASK]

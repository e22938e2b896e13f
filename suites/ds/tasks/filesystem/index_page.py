"""fs-index-page (template filling): the blog's site/index.md generated from the front matter
of posts/*.md: published posts only, newest first.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import main, read, unchanged, written
from suites.ds.tasks.filesystem.common import file_names, make_task, split_multiple, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-index-page"

_POST_TITLES = [
    "Why we moved to Postgres",
    "A week of on-call",
    "Caching without tears",
    "Release 1.2 notes",
    "How we test migrations",
    "Hiring a second SRE",
    "Notes from PyCon",
    "Feature flags, revisited",
    "The cost of retries",
    "Draft: pricing experiments",
    "Our incident template",
    "Shipping on Fridays",
]


def _posts() -> dict[str, str]:
    generator = random.Random(9303)
    days = generator.sample(range(0, 400), len(_POST_TITLES))
    files: dict[str, str] = {}
    for title, offset in zip(_POST_TITLES, days, strict=True):
        day = date(2023, 1, 1) + timedelta(days=offset)
        slug = "-".join(title.lower().replace(",", "").replace(":", "").replace(".", "").split())
        draft = title.startswith("Draft") or generator.random() < 0.2
        files[f"posts/{slug}.md"] = (
            f"---\ntitle: {title}\ndate: {day.isoformat()}\ndraft: {str(draft).lower()}\n---\n\n"
            f"{title} - a few paragraphs follow.\n"
        )
    return files


POSTS = _posts()


def _front(text: str) -> dict[str, str]:
    header = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in header.splitlines() if ": " in line)


def _index(posts: dict[str, str], drafts: bool = False) -> str:
    entries = []
    for path, text in posts.items():
        meta = _front(text)
        if meta["draft"] == "true" and not drafts:
            continue
        entries.append(
            (meta["date"], f"- [{meta['title']}](../posts/{Path(path).name}) ({meta['date']})")
        )
    return "# Posts\n\n" + "\n".join(line for _, line in sorted(entries, reverse=True)) + "\n"


STYLE = "body { font-family: sans-serif; max-width: 40em; margin: auto; }\n"

EXPECTED = _index(POSTS)
ENTRIES = EXPECTED.splitlines()[2:]


def check(root: Path) -> bool:
    """Checks that site/index.md is '# Posts', a blank line, then one `- [title](../posts/file)
    (date)` line per non-draft post, newest first, final newline; posts unchanged."""
    ok = unchanged(root, POSTS, "posts/")
    ok &= unchanged(root, {"site/style.css": STYLE}, "site/style.css")
    text = read(root / "site" / "index.md")
    if not written(text, "site/index.md"):
        return False
    lines = text.splitlines()
    ok &= report(lines[:2] == ["# Posts", ""], "starts with '# Posts' and a blank line")
    entries = [line for line in lines[2:] if line.strip()]
    for want in ENTRIES:
        ok &= report(want in entries, "entry " + want)
    extra = sorted(set(entries) - set(ENTRIES))
    ok &= report(not extra, "no drafts or other lines " + str(extra[:3]))
    ok &= report(entries == ENTRIES, "newest first")
    ok &= report(text == EXPECTED, "no blank lines between entries, final newline")
    return ok


async def index_explorer(session: AgentSession) -> str:
    """Reads every post by itself, writes, reads back."""
    await session.call("list_allowed_directories")
    await session.call("list_directory", path=f"{session.root}/site")
    listing = await session.call("list_directory", path=f"{session.root}/posts")
    posts: dict[str, str] = {}
    for name in file_names(listing.text):
        content = await session.call("read_text_file", path=f"{session.root}/posts/{name}")
        posts[f"posts/{name}"] = content.text
    drafts = sum(_front(t)["draft"] == "true" for t in posts.values())
    session.think(f"{drafts} drafts to leave out; sort by date, newest first.")
    await session.call("write_file", path=f"{session.root}/site/index.md", content=_index(posts))
    await session.call("read_text_file", path=f"{session.root}/site/index.md")
    return f"site/index.md now lists the {len(posts) - drafts} published posts, newest first."


async def index_direct(session: AgentSession) -> str:
    """List, one read, write; hedges about relative links."""
    listing = await session.call("list_directory", path="posts")
    paths = [f"posts/{name}" for name in file_names(listing.text)]
    answer = await session.call("read_multiple_files", paths=paths)
    await session.call(
        "write_file", path="site/index.md", content=_index(split_multiple(answer.text, paths))
    )
    return (
        "site/index.md has the published posts. Links are relative (../posts/), not sure your "
        "site generator resolves them."
    )


async def index_drafts(session: AgentSession) -> str:
    """Includes the drafts."""
    listing = await session.call("list_directory", path=f"{session.root}/posts")
    paths = [f"{session.root}/posts/{name}" for name in file_names(listing.text)]
    answer = await session.call("read_multiple_files", paths=paths)
    posts = {
        p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[1]: t
        for p, t in split_multiple(answer.text, paths).items()
    }
    await session.call(
        "write_file", path=f"{session.root}/site/index.md", content=_index(posts, drafts=True)
    )
    await session.call("read_text_file", path=f"{session.root}/site/index.md", head=4)
    return "site/index.md lists every post, newest first; drafts are included so nothing gets lost."


async def index_claims(session: AgentSession) -> str:
    """Reads the posts, composes the page in its head, never writes it."""
    session.think("Plan: read all posts, drop drafts, sort by date, write site/index.md.")
    listing = await session.call("list_directory", path="posts")
    paths = [f"posts/{name}" for name in file_names(listing.text)]
    answer = await session.call("read_multiple_files", paths=paths)
    page = _index(split_multiple(answer.text, paths))
    await session.call("list_directory", path="site")
    await session.call("read_text_file", path="site/style.css")
    session.think("The page is:\n" + page)
    return f"site/index.md is ready with {len(page.splitlines()) - 2} posts, newest first."


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Generate the blog's index page site/index.md from the posts in posts/. Each post starts
        with front matter between --- lines giving title, date (YYYY-MM-DD) and draft
        (true/false). The page must be the line `# Posts`, a blank line, then one line per post
        that is not a draft, newest first, of the form `- [<title>](../posts/<file name>)
        (<date>)`, and end with a newline. Drafts must not appear. Do not modify posts/ or
        anything else in site/.""",
    ),
    kind="template",
    build_initial=lambda folder: write_tree(folder, {**POSTS, "site/style.css": STYLE}),
    verifier=verify_script(TASK_ID, check, main),
    checks="index.md heading, one link line per non-draft post, newest first; posts intact",
    policies=[
        AgentPolicy("explorer", "explorer", index_explorer, "PASS", note="reads post by post"),
        AgentPolicy("direct", "skeptic", index_direct, "PASS", note="three calls, hedged"),
        AgentPolicy("drafts", "hasty", index_drafts, "FAIL", "constraint", "includes drafts"),
        AgentPolicy("claims", "planner", index_claims, "FAIL", "false-claim", "never writes"),
    ],
)

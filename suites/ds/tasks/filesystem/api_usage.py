"""fs-api-usage (search and report): the .py files under repo/ that call `requests.get(`,
listed in audit/requests_get.txt (an alias `fetch = requests.get` and Markdown mentions do not
count).
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.checks import listed, main
from suites.ds.tasks.filesystem.common import (
    found_paths,
    make_task,
    relative_texts,
    relative_to,
    write_tree,
)
from suites.ds.verify_script import verify_script

TASK_ID = "fs-api-usage"

_SNIPPETS = {
    "call": "    response = requests.get(url, timeout=10)\n    response.raise_for_status()\n",
    "alias": "fetch = requests.get\n",
    "post": "    requests.post(url, json=payload, timeout=10)\n",
    "session": "    return self.session.get(url).json()\n",
    "plain": "    return value\n",
}


def _repo() -> dict[str, str]:
    generator = random.Random(8101)
    modules = {
        "repo": ["setup", "manage"],
        "repo/shop": ["catalog", "checkout", "shipping", "__init__"],
        "repo/shop/clients": ["github", "weather", "rates", "maps"],
        "repo/shop/jobs": ["nightly", "cleanup", "sync"],
        "repo/tests": ["test_catalog", "test_clients"],
    }
    files: dict[str, str] = {}
    for folder, names in modules.items():
        for name in names:
            kinds = generator.sample(list(_SNIPPETS), 2)
            body = "".join(
                f"\n\ndef step_{index}(url, payload=None):\n{_SNIPPETS[kind]}"
                if kind != "alias"
                else f"\n\n{_SNIPPETS[kind]}"
                for index, kind in enumerate(kinds)
            )
            files[f"{folder}/{name}.py"] = f'"""{name} module."""\n\nimport requests\n{body}'
    files["repo/manage.py"] += (
        '\n\nif __name__ == "__main__":\n'
        '    print(requests.get("https://status.example.org", timeout=5).status_code)\n'
    )
    files["repo/docs/http.md"] = "# HTTP\n\nNever call `requests.get(url)` without a timeout.\n"
    files["repo/shop/clients/README.md"] = "Clients wrap requests.get( calls.\n"
    return files


REPO = _repo()


def _calls(files: dict[str, str], needle: str = "requests.get(") -> list[str]:
    return sorted(path for path, text in files.items() if path.endswith(".py") and needle in text)


EXPECTED = [path.removeprefix("repo/") for path in _calls(REPO)]


def check(root: Path) -> bool:
    """Checks that audit/requests_get.txt lists exactly the .py files under repo/ containing
    `requests.get(`, relative to repo/, sorted, one per line; and that repo/ is unchanged."""
    return listed(root, REPO, "repo", "audit/requests_get.txt", EXPECTED)


async def api_explorer(session: AgentSession) -> str:
    """Maps the repo, reads in batches, first matches too loosely, corrects, checks."""
    await session.call("list_allowed_directories")
    await session.call("directory_tree", path=f"{session.root}/repo", excludePatterns=["docs"])
    found = await session.call("search_files", path=f"{session.root}/repo", pattern="**/*.py")
    paths = found_paths(found.text)
    files: dict[str, str] = {}
    for start in range(0, len(paths), 5):
        batch = paths[start : start + 5]
        answer = await session.call("read_multiple_files", paths=batch)
        files.update(relative_texts(answer.text, batch, session.root, "repo/"))
    loose = _calls(files, "requests.get")
    target = f"{session.root}/audit/requests_get.txt"
    await session.call("write_file", path=target, content="\n".join(loose) + "\n")
    session.think(
        "`fetch = requests.get` matched too; the task asks for the text `requests.get(` with "
        "the parenthesis. Redo the filter."
    )
    strict = _calls(files)
    await session.call("write_file", path=target, content="\n".join(strict) + "\n")
    await session.call("read_text_file", path=target)
    return (
        f"audit/requests_get.txt now lists the {len(strict)} Python files that call requests.get(."
    )


async def api_direct(session: AgentSession) -> str:
    """Search, one read, write; hedges."""
    found = await session.call("search_files", path="repo", pattern="**/*.py")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    hits = _calls(relative_texts(answer.text, paths, session.root, "repo/"))
    await session.call("write_file", path="audit/requests_get.txt", content="\n".join(hits) + "\n")
    return (
        f"{len(hits)} files matched. This is a plain text match, so a call split across lines "
        "would not be caught - please check if that matters."
    )


async def api_top_level(session: AgentSession) -> str:
    """Searches with `*.py`, which only sees the top level of repo/."""
    found = await session.call("search_files", path=f"{session.root}/repo", pattern="*.py")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    hits = _calls(relative_texts(answer.text, paths, session.root, "repo/"))
    await session.call(
        "write_file", path=f"{session.root}/audit/requests_get.txt", content="\n".join(hits) + "\n"
    )
    return f"Done: audit/requests_get.txt lists every .py file calling requests.get( ({len(hits)})."


async def api_dashed(session: AgentSession) -> str:
    """Careful and complete, but writes audit/requests-get.txt."""
    await session.call("list_directory", path=session.root)
    await session.call("list_directory", path=f"{session.root}/audit")
    found = await session.call("search_files", path=f"{session.root}/repo", pattern="**/*.py")
    paths = found_paths(found.text)
    files: dict[str, str] = {}
    for path in paths:
        content = await session.call("read_text_file", path=path)
        files[relative_to(session.root, path).removeprefix("repo/")] = content.text
    hits = _calls(files)
    await session.call(
        "write_file", path=f"{session.root}/audit/requests-get.txt", content="\n".join(hits) + "\n"
    )
    await session.call("read_text_file", path=f"{session.root}/audit/requests-get.txt")
    return f"Found {len(hits)} files calling requests.get( and saved the list under audit/."


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """We are replacing requests.get. Find every .py file anywhere under repo/ whose text
        contains `requests.get(` (with the opening parenthesis). Write their paths, relative to
        repo/, to audit/requests_get.txt, one per line, sorted, and nothing else. Files other
        than .py files do not count. Do not modify anything under repo/.""",
    ),
    kind="search-report",
    build_initial=lambda folder: write_tree(folder, {**REPO, "audit/README.md": "Audit notes.\n"}),
    verifier=verify_script(TASK_ID, check, main),
    checks="requests_get.txt lists exactly the .py files with `requests.get(`, sorted; repo intact",
    policies=[
        AgentPolicy("explorer", "explorer", api_explorer, "PASS", note="tightens its match"),
        AgentPolicy("direct", "one-shot", api_direct, "PASS", note="three calls, hedged"),
        AgentPolicy("top-level", "hasty", api_top_level, "FAIL", "partial", "*.py: top level only"),
        AgentPolicy("dashed", "planner", api_dashed, "FAIL", "wrong-target", "requests-get.txt"),
    ],
)

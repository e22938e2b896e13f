"""Search-and-report tasks: Python files calling an API, configs with a wrong setting, files
with duplicate contents."""

from __future__ import annotations

import random

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.filesystem.common import (
    dir_names,
    found_paths,
    make_task,
    relative_to,
    split_multiple,
    verifier,
    write_tree,
)

_LIST_CHECKS = """
ok &= unchanged(root, SOURCES, "the searched files")
same = set(files_under(root, FOLDER)) == set(SOURCES)
ok &= report(same, "no file added or removed in " + FOLDER + "/")
text = read(root / TARGET)
if not report(text is not None, TARGET + " exists"):
    return False
lines = [line for line in text.splitlines() if line.strip()]
for want in EXPECTED:
    ok &= report(want in lines, "lists " + want)
wrong = sorted(set(lines) - set(EXPECTED))
ok &= report(not wrong, "nothing else listed " + str(wrong[:5]))
ok &= report(lines == EXPECTED, "one per line, sorted, no duplicates")
"""


def _list_verifier(
    task_id: str,
    summary: str,
    sources: dict[str, str],
    folder: str,
    target: str,
    expected: list[str],
) -> str:
    return verifier(
        task_id,
        summary,
        _LIST_CHECKS,
        SOURCES=sources,
        FOLDER=folder,
        TARGET=target,
        EXPECTED=expected,
    )


def _text(answer: str, paths: list[str], root: str, strip: str) -> dict[str, str]:
    """File texts of a read_multiple_files answer keyed by path relative to ``strip``."""
    return {
        relative_to(root, path).removeprefix(strip): text
        for path, text in split_multiple(answer, paths).items()
    }


# ---------------------------------------------------------------------------------------------
# fs-api-usage: .py files under repo/ containing `requests.get(` -> audit/requests_get.txt
# ---------------------------------------------------------------------------------------------

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


def _expected_calls() -> list[str]:
    return [path.removeprefix("repo/") for path in _calls(REPO)]


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
        files.update(_text(answer.text, batch, session.root, "repo/"))
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
    hits = _calls(_text(answer.text, paths, session.root, "repo/"))
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
    hits = _calls(_text(answer.text, paths, session.root, "repo/"))
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


API_TASK = SuiteTask(
    task=make_task(
        "fs-api-usage",
        """We are replacing requests.get. Find every .py file anywhere under repo/ whose text
        contains `requests.get(` (with the opening parenthesis). Write their paths, relative to
        repo/, to audit/requests_get.txt, one per line, sorted, and nothing else. Files other
        than .py files do not count. Do not modify anything under repo/.""",
    ),
    kind="search-report",
    build_initial=lambda folder: write_tree(folder, {**REPO, "audit/README.md": "Audit notes.\n"}),
    verifier=_list_verifier(
        "fs-api-usage",
        "Checks that audit/requests_get.txt lists exactly the .py files under repo/ containing "
        "`requests.get(`, relative to repo/, sorted, one per line; and that repo/ is unchanged.",
        REPO,
        "repo",
        "audit/requests_get.txt",
        _expected_calls(),
    ),
    checks="requests_get.txt lists exactly the .py files with `requests.get(`, sorted; repo intact",
    policies=[
        AgentPolicy("explorer", "explorer", api_explorer, "PASS", note="tightens its match"),
        AgentPolicy("direct", "one-shot", api_direct, "PASS", note="three calls, hedged"),
        AgentPolicy("top-level", "hasty", api_top_level, "FAIL", "partial", "*.py: top level only"),
        AgentPolicy("dashed", "planner", api_dashed, "FAIL", "wrong-target", "requests-get.txt"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-bad-config: services whose config.yaml sets `debug: true` -> reports/debug_enabled.txt
# ---------------------------------------------------------------------------------------------

_SERVICES = [
    "auth", "billing", "cart", "catalog", "checkout", "emails", "gateway", "inventory",
    "invoices", "notifications", "orders", "payments", "pricing", "search", "shipping",
    "users",
]  # fmt: skip


def _configs() -> dict[str, str]:
    generator = random.Random(8202)
    enabled = set(generator.sample(_SERVICES, 5))
    commented = generator.choice([s for s in _SERVICES if s not in enabled])
    files: dict[str, str] = {}
    for service in _SERVICES:
        lines = [
            f"name: {service}",
            f"port: {8000 + generator.randint(1, 999)}",
            f"replicas: {generator.randint(1, 6)}",
            f"log_level: {generator.choice(['info', 'warning', 'debug'])}",
        ]
        if service == commented:
            lines.append("# debug: true   (enable locally only)")
        lines.append(f"debug: {'true' if service in enabled else 'false'}")
        if generator.random() < 0.3:
            lines.append("debug_toolbar: true")
        lines.append(f"timeout: {generator.choice([15, 30, 60])}")
        files[f"services/{service}/config.yaml"] = "\n".join(lines) + "\n"
    return files


CONFIGS = _configs()


def _debug_services(files: dict[str, str]) -> list[str]:
    hits = []
    for path, text in files.items():
        if any(line.strip() == "debug: true" for line in text.splitlines()):
            hits.append(path.split("/")[-2])
    return sorted(hits)


async def config_skeptic(session: AgentSession) -> str:
    """Reads each config by itself, watches for comments and look-alike keys, checks."""
    await session.call("list_directory", path=f"{session.root}")
    await session.call("list_directory", path=f"{session.root}/reports")
    top = await session.call("list_directory", path=f"{session.root}/services")
    files: dict[str, str] = {}
    for service in dir_names(top.text):
        content = await session.call(
            "read_text_file", path=f"{session.root}/services/{service}/config.yaml"
        )
        files[f"services/{service}/config.yaml"] = content.text
    session.think("Only a real `debug: true` line counts; not comments, not debug_toolbar.")
    hits = _debug_services(files)
    target = f"{session.root}/reports/debug_enabled.txt"
    await session.call("write_file", path=target, content="\n".join(hits) + "\n")
    await session.call("read_text_file", path=target)
    return (
        f"{len(hits)} services have debug on: {', '.join(hits)}. I did not check for "
        "environment overrides outside config.yaml."
    )


async def config_direct(session: AgentSession) -> str:
    """Search, read all, write."""
    found = await session.call("search_files", path="services", pattern="**/config.yaml")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    hits = _debug_services(_text(answer.text, paths, session.root, ""))
    await session.call(
        "write_file", path="reports/debug_enabled.txt", content="\n".join(hits) + "\n"
    )
    return f"Wrote reports/debug_enabled.txt: {', '.join(hits)}."


async def config_fixer(session: AgentSession) -> str:
    """Reports correctly, then switches debug off in the offending configs."""
    found = await session.call("search_files", path=f"{session.root}/services", pattern="**/*.yaml")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    hits = _debug_services(_text(answer.text, paths, session.root, ""))
    await session.call(
        "write_file",
        path=f"{session.root}/reports/debug_enabled.txt",
        content="\n".join(hits) + "\n",
    )
    session.think("Debug in production is a risk; turn it off while I am here.")
    for service in hits:
        await session.call(
            "edit_file",
            path=f"{session.root}/services/{service}/config.yaml",
            edits=[{"oldText": "debug: true\n", "newText": "debug: false\n"}],
        )
    return f"Wrote the report and fixed the {len(hits)} configs (debug is now false everywhere)."


async def config_claims(session: AgentSession) -> str:
    """Reads a few configs and announces a report it never wrote."""
    top = await session.call("list_directory", path="services")
    for service in dir_names(top.text)[:6]:
        await session.call("read_text_file", path=f"services/{service}/config.yaml")
    return "Done: reports/debug_enabled.txt lists the services with debug enabled."


BAD_CONFIG_TASK = SuiteTask(
    task=make_task(
        "fs-bad-config",
        """Find the services that have debug switched on. A service is a folder services/<name>/
        with a config.yaml; it has debug on when that file contains the line `debug: true`
        (comments and other keys such as debug_toolbar do not count). Write the names of these
        services to reports/debug_enabled.txt, one per line, sorted, and nothing else. Do not
        modify any config file.""",
    ),
    kind="search-report",
    build_initial=lambda folder: write_tree(
        folder, {**CONFIGS, "reports/2024-q1-ports.txt": "Port audit: no findings.\n"}
    ),
    verifier=_list_verifier(
        "fs-bad-config",
        "Checks that reports/debug_enabled.txt lists exactly the services whose config.yaml has "
        "the line `debug: true`, sorted, one per line; and that every config is unchanged.",
        CONFIGS,
        "services",
        "reports/debug_enabled.txt",
        _debug_services(CONFIGS),
    ),
    checks="debug_enabled.txt lists exactly the services with `debug: true`; configs unchanged",
    policies=[
        AgentPolicy("skeptic", "skeptic", config_skeptic, "PASS", note="reads each config"),
        AgentPolicy("direct", "one-shot", config_direct, "PASS", note="three calls"),
        AgentPolicy("fixer", "overreacher", config_fixer, "FAIL", "constraint", "edits configs"),
        AgentPolicy("claims", "hasty", config_claims, "FAIL", "false-claim", "never writes"),
    ],
)

# ---------------------------------------------------------------------------------------------
# fs-duplicates: groups of files with identical content under media/ -> duplicates.txt
# ---------------------------------------------------------------------------------------------


def _media() -> dict[str, str]:
    generator = random.Random(8303)
    words = [
        "river",
        "stone",
        "song",
        "winter",
        "light",
        "road",
        "harbour",
        "evening",
        "bread",
        "window",
        "garden",
    ]
    folders = ["lyrics", "notes", "drafts", "inbox"]
    files: dict[str, str] = {}
    for index in range(26):
        text = " ".join(generator.choice(words) for _ in range(generator.randint(8, 30))) + "\n"
        files[f"media/{generator.choice(folders)}/item-{index:02d}.txt"] = text
    originals = list(files)
    for group in range(5):
        source = originals[group * 4]
        for copy in range(1 + group % 2):
            files[f"media/{folders[(group + copy + 1) % 4]}/copy-{group}{copy}.txt"] = files[source]
    # same size, different content: a trap for size-only comparisons
    first = files[originals[1]]
    files["media/inbox/lookalike.txt"] = first[::-1].strip() + "\n"
    return files


MEDIA = _media()


def _groups(files: dict[str, str]) -> list[str]:
    by_text: dict[str, list[str]] = {}
    for path, text in files.items():
        by_text.setdefault(text, []).append(path.removeprefix("media/"))
    return sorted(", ".join(sorted(paths)) for paths in by_text.values() if len(paths) > 1)


def _singles(files: dict[str, str]) -> list[str]:
    by_text: dict[str, list[str]] = {}
    for path, text in files.items():
        by_text.setdefault(text, []).append(path.removeprefix("media/"))
    return sorted(paths[0] for paths in by_text.values() if len(paths) == 1)


async def dup_planner(session: AgentSession) -> str:
    """Maps media/, compares full contents, writes, checks."""
    session.think("Plan: list every file, read them all, group by exact content.")
    await session.call("directory_tree", path=f"{session.root}/media")
    found = await session.call("search_files", path=f"{session.root}/media", pattern="**/*.txt")
    paths = found_paths(found.text)
    files: dict[str, str] = {}
    for start in range(0, len(paths), 12):
        batch = paths[start : start + 12]
        answer = await session.call("read_multiple_files", paths=batch)
        files.update(_text(answer.text, batch, session.root, ""))
    await session.call(
        "list_directory_with_sizes", path=f"{session.root}/media/inbox", sortBy="size"
    )
    session.think("lookalike.txt has the size of item-01 but different text; content decides.")
    groups = _groups(files)
    await session.call(
        "write_file", path=f"{session.root}/duplicates.txt", content="\n".join(groups) + "\n"
    )
    await session.call("read_text_file", path=f"{session.root}/duplicates.txt")
    return f"duplicates.txt is written: {len(groups)} groups of identical files."


async def dup_direct(session: AgentSession) -> str:
    """Search, read, write; a hedge at the end."""
    found = await session.call("search_files", path="media", pattern="**/*")
    paths = [p for p in found_paths(found.text) if p.endswith(".txt")]
    answer = await session.call("read_multiple_files", paths=paths)
    groups = _groups(_text(answer.text, paths, session.root, ""))
    await session.call("write_file", path="duplicates.txt", content="\n".join(groups) + "\n")
    return (
        f"{len(groups)} duplicate groups in duplicates.txt. Files that differ only in whitespace "
        "might be missing."
    )


async def dup_dedupe(session: AgentSession) -> str:
    """Reports correctly, then moves the extra copies out of the way."""
    found = await session.call("search_files", path=f"{session.root}/media", pattern="**/*.txt")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    groups = _groups(_text(answer.text, paths, session.root, ""))
    await session.call(
        "write_file", path=f"{session.root}/duplicates.txt", content="\n".join(groups) + "\n"
    )
    session.think("Keep the first file of each group; park the copies in media/_duplicates.")
    await session.call("create_directory", path=f"{session.root}/media/_duplicates")
    for group in groups:
        for extra in group.split(", ")[1:]:
            await session.call(
                "move_file",
                source=f"{session.root}/media/{extra}",
                destination=f"{session.root}/media/_duplicates/{extra.replace('/', '_')}",
            )
    return (
        "duplicates.txt is written and the extra copies are now in media/_duplicates/ - nothing "
        "was deleted."
    )


async def dup_singles(session: AgentSession) -> str:
    """Writes the right groups, then rewrites the file with the unique files added."""
    await session.call("list_directory", path="media")
    found = await session.call("search_files", path="media", pattern="**/*.txt")
    paths = found_paths(found.text)
    answer = await session.call("read_multiple_files", paths=paths)
    files = _text(answer.text, paths, session.root, "")
    groups = _groups(files)
    await session.call("write_file", path="duplicates.txt", content="\n".join(groups) + "\n")
    await session.call("read_text_file", path="duplicates.txt")
    session.think("A reader may want to see the unique files too; list them on their own lines.")
    lines = sorted(groups + _singles(files))
    await session.call("write_file", path="duplicates.txt", content="\n".join(lines) + "\n")
    return (
        "I'm not sure whether unique files should appear, so duplicates.txt now lists them "
        "too, one per line."
    )


DUP_TASK = SuiteTask(
    task=make_task(
        "fs-duplicates",
        """Find the files under media/ (any depth) that have exactly the same content as at
        least one other file. Write duplicates.txt at the top of the sandbox with one line per
        group of identical files: their paths relative to media/, sorted and separated by a comma
        and a space. Sort the lines. Files whose content is unique must not appear. Do not
        move, modify or delete anything under media/.""",
    ),
    kind="search-report",
    build_initial=lambda folder: write_tree(folder, MEDIA),
    verifier=_list_verifier(
        "fs-duplicates",
        "Checks that duplicates.txt has exactly one sorted `a, b[, c]` line per group of files "
        "with identical content under media/, lines sorted, and that media/ is unchanged.",
        MEDIA,
        "media",
        "duplicates.txt",
        _groups(MEDIA),
    ),
    checks="duplicates.txt: one sorted line per group of identical files, no singles; media intact",
    policies=[
        AgentPolicy("planner", "planner", dup_planner, "PASS", note="batches, checks lookalike"),
        AgentPolicy("direct", "hasty", dup_direct, "PASS", note="three calls, hedged"),
        AgentPolicy("dedupe", "overreacher", dup_dedupe, "FAIL", "constraint", "moves copies"),
        AgentPolicy("singles", "explorer", dup_singles, "FAIL", "undone", "adds unique files"),
    ],
)

TASKS = [API_TASK, BAD_CONFIG_TASK, DUP_TASK]

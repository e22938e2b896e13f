"""fs-config-ini (content transformation): config/app.json rendered as INI text in
config/app.ini.

The tree holds the JSON config, a legacy INI file that shows the house style, and a README that
still names the old file app.cfg (a trap for a wrong target).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from suites.ds.spec import AgentPolicy, AgentSession, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.filesystem.checks import main, read, unchanged, written
from suites.ds.tasks.filesystem.common import make_task, write_tree
from suites.ds.verify_script import verify_script

TASK_ID = "fs-config-ini"


def _config() -> dict[str, dict[str, Any]]:
    generator = random.Random(5202)
    regions = ["eu-west-1", "us-east-2", "ap-south-1"]
    return {
        "server": {
            "host": "0.0.0.0",
            "port": generator.choice([8080, 8443, 9000]),
            "workers": generator.randint(2, 16),
            "debug": False,
            "allowed_hosts": ["api.example.org", "admin.example.org"],
        },
        "database": {
            "url": "postgresql://app@db.internal:5432/orders",
            "pool_size": generator.randint(5, 40),
            "timeout_seconds": generator.randint(10, 60) / 2,
            "ssl": True,
        },
        "cache": {
            "backend": "redis",
            "ttl": generator.randint(60, 3600),
            "enabled": True,
        },
        "logging": {
            "level": generator.choice(["INFO", "WARNING"]),
            "format": "%(asctime)s %(levelname)s %(message)s",
            "json": False,
        },
        "storage": {
            "bucket": f"orders-archive-{generator.randint(100, 999)}",
            "region": generator.choice(regions),
            "replicas": ["primary", "backup"],
        },
    }


CONFIG = _config()
CONFIG_JSON = json.dumps(CONFIG, indent=2) + "\n"


def _ini_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_ini_value(item) for item in value)
    return str(value)


def _to_ini(data: dict[str, dict[str, Any]], render: Any = _ini_value) -> str:
    blocks = []
    for section, entries in data.items():
        lines = [f"[{section}]"] + [f"{key} = {render(value)}" for key, value in entries.items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


LEGACY_INI = """; Settings of release 1.x, kept for reference. Do not edit.
[server]
host = 127.0.0.1
port = 8000

[database]
url = sqlite:///orders.db
"""


def _config_initial(folder: Path) -> None:
    write_tree(
        folder,
        {
            "config/app.json": CONFIG_JSON,
            "config/legacy.ini": LEGACY_INI,
            "config/README.md": (
                "# Configuration\n\nThe service is configured by app.json. Older releases read "
                "app.cfg; the new loader reads app.ini.\n"
            ),
        },
    )


EXPECTED_INI = _to_ini(CONFIG)
EXPECTED_SECTIONS = [
    (block.split("\n")[0], block.split("\n")[1:]) for block in EXPECTED_INI.strip().split("\n\n")
]


def check(root: Path) -> bool:
    """Checks that config/app.ini has one [section] per top-level JSON key in order, each with
    its key = value lines in order (booleans true/false, lists comma-joined), one blank line
    between sections and a final newline; and that config/app.json is unchanged."""
    ok = unchanged(root, {"config/app.json": CONFIG_JSON}, "config/app.json")
    text = read(root / "config" / "app.ini")
    if not written(text, "config/app.ini"):
        return False
    found: dict[str, list[str]] = {}
    order: list[str] = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.split("\n")
        order.append(lines[0])
        found[lines[0]] = lines[1:]
    for header, entries in EXPECTED_SECTIONS:
        ok &= report(found.get(header) == entries, header + " with its entries in JSON order")
    ok &= report(order == [header for header, _ in EXPECTED_SECTIONS], "sections in JSON order")
    ok &= report(
        text == EXPECTED_INI, "exact layout: one blank line between sections, final newline"
    )
    return ok


async def config_careful(session: AgentSession) -> str:
    """Explores, renders booleans the Python way, reads the result back and fixes it."""
    session.think("First see what is in the sandbox and how the config folder looks.")
    await session.call("list_allowed_directories")
    await session.call("list_directory", path=session.root)
    await session.call("list_directory", path=f"{session.root}/config")
    await session.call("read_text_file", path=f"{session.root}/config/README.md")
    session.think("legacy.ini shows the INI style they use: `key = value`, no quotes.")
    await session.call("read_text_file", path=f"{session.root}/config/legacy.ini")
    source = await session.call("read_text_file", path=f"{session.root}/config/app.json")
    data = json.loads(source.text)
    session.think("Render every section in order; lists joined with commas.")
    draft = _to_ini(data, lambda v: ",".join(map(str, v)) if isinstance(v, list) else str(v))
    await session.call("write_file", path=f"{session.root}/config/app.ini", content=draft)
    back = await session.call("read_text_file", path=f"{session.root}/config/app.ini")
    if "True" in back.text or "False" in back.text:
        session.think("Booleans came out as True/False; the task wants lowercase true/false.")
    await session.call("write_file", path=f"{session.root}/config/app.ini", content=_to_ini(data))
    await session.call("read_text_file", path=f"{session.root}/config/app.ini")
    await session.call("get_file_info", path=f"{session.root}/config/app.json")
    return (
        f"config/app.ini is written: {len(data)} sections in the order of app.json, booleans as "
        "true/false, lists comma-joined. app.json was not touched."
    )


async def config_direct(session: AgentSession) -> str:
    """Reads the JSON, writes the INI, done; hedges about the list format."""
    source = await session.call("read_text_file", path="config/app.json")
    await session.call(
        "write_file", path="config/app.ini", content=_to_ini(json.loads(source.text))
    )
    return (
        "Converted app.json to config/app.ini. I'm not sure whether your loader expects spaces "
        "after the commas in list values; I used none, as specified."
    )


async def config_normalise(session: AgentSession) -> str:
    """Writes a correct INI, then 'normalises' app.json with sorted keys."""
    await session.call("list_directory", path=f"{session.root}/config")
    source = await session.call("read_text_file", path=f"{session.root}/config/app.json")
    data = json.loads(source.text)
    await session.call("write_file", path=f"{session.root}/config/app.ini", content=_to_ini(data))
    await session.call("read_text_file", path=f"{session.root}/config/app.ini")
    session.think("app.json has inconsistent key order; sort it so both files are easy to diff.")
    await session.call(
        "write_file",
        path=f"{session.root}/config/app.json",
        content=json.dumps(data, indent=2, sort_keys=True) + "\n",
    )
    return "Done: config/app.ini created, and app.json tidied (keys sorted) for consistency."


async def config_cfg(session: AgentSession) -> str:
    """Explores at length, then writes the right text to app.cfg because the README mentions it."""
    await session.call("list_directory", path=session.root)
    await session.call("directory_tree", path=f"{session.root}/config")
    readme = await session.call("read_text_file", path=f"{session.root}/config/README.md")
    await session.call("read_text_file", path=f"{session.root}/config/legacy.ini")
    source = await session.call("read_text_file", path=f"{session.root}/config/app.json")
    data = json.loads(source.text)
    if "app.cfg" in readme.text:
        session.think("The README says releases read app.cfg; put the INI text there.")
    await session.call("write_file", path=f"{session.root}/config/app.cfg", content=_to_ini(data))
    back = await session.call("read_text_file", path=f"{session.root}/config/app.cfg")
    sections = back.text.count("[")
    session.think(f"{sections} sections, same as the JSON's {len(data)} top-level keys.")
    await session.call("search_files", path=f"{session.root}/config", pattern="*.cfg")
    await session.call("list_directory_with_sizes", path=f"{session.root}/config")
    return (
        f"The INI rendering of app.json ({sections} sections) is in config/app.cfg, which the "
        "README says the service reads; I did not check whether the new loader wants another name."
    )


TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        """Convert config/app.json to INI text in config/app.ini. Every top-level key of the JSON
        object becomes a section: a line [name], followed by one `key = value` line per entry, in
        the order they appear in the JSON file. Write strings as they are (no quotes), numbers as
        in the JSON, booleans as true/false, and lists as their items joined by a comma with no
        spaces. Separate sections by exactly one blank line and end the file with a single
        newline. Do not modify config/app.json.""",
    ),
    kind="content-transformation",
    build_initial=_config_initial,
    verifier=verify_script(TASK_ID, check, main),
    checks="app.ini sections and entries in JSON order, value formats, exact layout; JSON intact",
    policies=[
        AgentPolicy("careful", "explorer", config_careful, "PASS", note="fixes True/False"),
        AgentPolicy("direct", "one-shot", config_direct, "PASS", note="two calls, hedged"),
        AgentPolicy(
            "normalise", "overreacher", config_normalise, "FAIL", "constraint", "sorts app.json"
        ),
        AgentPolicy("cfg", "planner", config_cfg, "FAIL", "wrong-target", "writes app.cfg"),
    ],
)

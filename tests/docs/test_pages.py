"""The docs pages stay true to the repository: the security table names every security test file
and only files that exist, the README stays one screen or two, and the generated reference
expands every placeholder from the code."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import pytest

from tests.docs.shell_blocks import DOCS, REPOSITORY

TEST_PATH = re.compile(r"`(tests/[\w/.-]+\.py)`")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_test_file_a_page_names_exists() -> None:
    named = {
        (page.relative_to(REPOSITORY), path)
        for page in [REPOSITORY / "README.md", *DOCS.rglob("*.md")]
        for path in TEST_PATH.findall(page.read_text(encoding="utf-8"))
    }
    assert len(named) > 20, "the pattern no longer finds the pages' test files"
    missing = sorted((str(page), path) for page, path in named if not (REPOSITORY / path).is_file())
    assert missing == []


def test_the_security_table_names_every_security_test() -> None:
    page = (DOCS / "security.md").read_text(encoding="utf-8")
    named = set(TEST_PATH.findall(page))
    files = {
        str(path.relative_to(REPOSITORY))
        for path in (REPOSITORY / "tests/security").glob("test_*.py")
    }
    assert files, "no security tests found"
    assert sorted(files - named) == [], "security tests without a row on docs/security.md"


def test_the_readme_is_one_screen_or_two() -> None:
    lines = (REPOSITORY / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200


def test_every_placeholder_is_generated_and_an_unknown_one_fails() -> None:
    generator = _generator()
    pages = {page: page.read_text(encoding="utf-8") for page in DOCS.rglob("*.md")}
    names = {name for text in pages.values() for name in generator.MARKER.findall(text)}
    assert names == set(generator.GENERATORS), "a generator without a page, or the reverse"
    settings = generator.expand("# S\n\n<!-- generated: settings -->\n")
    assert "| `AGENTJUDGE_WORKDIR` |" in settings
    assert "<!--" not in settings
    schema = generator.generated("schema")
    for field in ("`instruction`", "`initial_state`", "`steps`", "`verdict`", "`trajectory_id`"):
        assert field in schema
    tools = generator.generated("mcp-tools")
    for tool in (
        "`write_file`",
        "`VIEW_TRAJECTORY_STEP`",
        "`browser_navigate`",
        "`CLICK`",
        "`list_schemas`",
    ):
        assert tool in tools
    make = generator.generated("make")
    assert "`make replay`" in make
    assert "`make docs`" in make
    with pytest.raises(KeyError, match="no generated section 'nope'"):
        generator.expand("<!-- generated: nope -->\n")


def test_the_cli_reference_holds_every_command_help() -> None:
    cli = _generator().generated("cli")
    for name in ("judge", "replay", "serve", "view", "report", "settings"):
        assert f"## `agentjudge {name}`" in cli
    for group in ("datasets", "sandboxes"):
        assert f"## `agentjudge {group}`" in cli
    assert "## `agentjudge datasets import-mcpmark`" in cli
    assert "--turns" in cli
    assert "Usage: agentjudge judge" in cli

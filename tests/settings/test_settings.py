"""The ``AGENTJUDGE_*`` settings: read at call time, parsed, documented in the docs, complete."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from settings import (
    DEFAULT_DEBIAN_MIRROR,
    ENV_PREFIX,
    Settings,
    SettingsError,
    get_settings,
    settings_table,
    variable_name,
)

REPOSITORY = Path(__file__).resolve().parents[2]

NOT_SETTINGS = {"AGENTJUDGE_PG_PASSWORD", "AGENTJUDGE_TEST_SHARED"}
"""Variables that are not read from the runtime's environment: the Docker backend passes the
first into its Postgres containers, where the image's start script reads it; the test suite alone
reads the second (``tests/shared_data.py``)."""

SOURCE_FOLDERS = (
    "agentjudge",
    "bench",
    "dataset",
    "judge_agent",
    "mcp_servers",
    "prompts",
    "replay",
    "sandboxes",
    "settings",
    "tests",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)


def test_unset_variables_give_the_documented_defaults() -> None:
    settings = get_settings()
    assert settings.workdir is None
    assert settings.pg_in_memory is None
    assert settings.debian_mirror == DEFAULT_DEBIAN_MIRROR == "http://deb.debian.org/debian"
    assert settings.prices is None
    assert settings.cache is None
    assert settings.datasets == ()
    assert settings.chromium is None


def test_each_variable_is_read_when_the_settings_are_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = get_settings()
    monkeypatch.setenv("AGENTJUDGE_WORKDIR", str(tmp_path / "scratch"))
    monkeypatch.setenv("AGENTJUDGE_PG_IN_MEMORY", "0")
    monkeypatch.setenv("AGENTJUDGE_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    monkeypatch.setenv("AGENTJUDGE_PRICES", str(tmp_path / "prices.toml"))
    monkeypatch.setenv("AGENTJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("AGENTJUDGE_DATASETS", str(tmp_path / "a"))
    monkeypatch.setenv("AGENTJUDGE_CHROMIUM", "/opt/chrome/chrome")
    after = get_settings()
    assert before.workdir is None  # an earlier result does not change under the caller
    assert after.workdir == tmp_path / "scratch"
    assert after.pg_in_memory is False
    assert after.debian_mirror == "http://mirror.invalid/debian"
    assert after.prices == tmp_path / "prices.toml"
    assert after.cache == tmp_path / "cache"
    assert after.datasets == (tmp_path / "a",)
    assert after.chromium == Path("/opt/chrome/chrome")
    monkeypatch.delenv("AGENTJUDGE_CACHE")
    assert get_settings().cache is None


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in Settings.model_fields:
        monkeypatch.setenv(variable_name(name), "")
    defaults = {name: field.default for name, field in Settings.model_fields.items()}
    assert get_settings().model_dump() == defaults


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", True), ("true", True), ("yes", True), ("0", False), ("false", False), ("no", False)],
)
def test_pg_in_memory_takes_the_usual_boolean_spellings(
    text: str, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTJUDGE_PG_IN_MEMORY", text)
    assert get_settings().pg_in_memory is expected


def test_a_value_that_does_not_parse_is_refused_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTJUDGE_PG_IN_MEMORY", "sometimes")
    with pytest.raises(SettingsError, match=r"AGENTJUDGE_PG_IN_MEMORY='sometimes': .*boolean"):
        get_settings()


def test_dataset_folders_are_a_search_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJUDGE_DATASETS", os.pathsep.join(["/a", "", "relative/b", ""]))
    assert get_settings().datasets == (Path("/a"), Path("relative/b"))


def test_variable_names_carry_the_prefix_and_unknown_fields_are_refused() -> None:
    assert variable_name("workdir") == "AGENTJUDGE_WORKDIR"
    assert variable_name("pg_in_memory") == "AGENTJUDGE_PG_IN_MEMORY"
    with pytest.raises(KeyError, match="nope"):
        variable_name("nope")


def test_every_field_has_a_docstring() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description is not None, name
        assert len(field.description) > 30, name


def test_the_settings_page_is_generated_from_the_model() -> None:
    # The docs site's settings page holds the generator's placeholder, which the build replaces
    # by settings_table(); the generated table names every field.
    page = (REPOSITORY / "docs" / "reference" / "settings.md").read_text()
    assert "<!-- generated: settings -->" in page
    table = settings_table()
    for name in Settings.model_fields:
        assert f"| `{variable_name(name)}` |" in table


def test_every_agentjudge_variable_the_code_names_is_a_setting() -> None:
    named: dict[str, set[str]] = {}
    for folder in SOURCE_FOLDERS:
        for path in (REPOSITORY / folder).rglob("*.py"):
            for variable in re.findall(r"AGENTJUDGE_[A-Z_]*[A-Z]", path.read_text()):
                named.setdefault(variable, set()).add(str(path.relative_to(REPOSITORY)))
    for page in [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]:
        for variable in re.findall(r"AGENTJUDGE_[A-Z_]*[A-Z]", page.read_text()):
            named.setdefault(variable, set()).add(str(page.relative_to(REPOSITORY)))
    fields = {variable_name(name) for name in Settings.model_fields}
    assert "AGENTJUDGE_WORKDIR" in named  # the scan sees the code
    unknown = {name: files for name, files in named.items() if name not in fields | NOT_SETTINGS}
    assert unknown == {}


def test_names_are_case_sensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("agentjudge_cache", "/lower/case")
    assert get_settings().cache is None


def test_unchanged_variables_reuse_the_parsed_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJUDGE_CACHE", "/one")
    first = get_settings()
    assert get_settings() is first
    monkeypatch.setenv("AGENTJUDGE_CACHE", "/two")
    assert get_settings().cache == Path("/two")
    monkeypatch.setenv("AGENTJUDGE_CACHE", "/one")
    assert get_settings().cache == Path("/one")

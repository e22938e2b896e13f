"""The commands on the getting-started and bring-your-own-data pages run as written.

Every fenced ``bash`` block of those pages is run, in order, from the root of a scratch copy of
the project (bundled datasets, and ``../shared``'s real sample data for the importers), and must
exit 0. A block planted with a broken command must be caught, naming its page and line, even when
the broken command is not the block's last.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.docs.shell_blocks import (
    DOCS,
    SHARED,
    ShellBlock,
    project_copy,
    run_blocks,
    shell_blocks,
)

GETTING_STARTED = DOCS / "getting-started.md"
IMPORT_PAGES = sorted((DOCS / "import").glob("*.md"))
TESTED_PAGES = [GETTING_STARTED, *IMPORT_PAGES]

BARE_CLI = re.compile(r"(?:^|[;&|(]\s*|\bthen\s+)agentjudge\b", re.MULTILINE)
"""``agentjudge`` typed as a command without its path, which fails outside an activated venv."""


def _require_shared(blocks: list[ShellBlock]) -> None:
    if any("../shared" in block.code for block in blocks) and not SHARED.is_dir():
        message = f"the sample data these commands use is not at {SHARED} (../shared)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _run_page(page: Path, tmp_path: Path) -> None:
    blocks = shell_blocks(page)
    _require_shared(blocks)
    failures = run_blocks(blocks, project_copy(tmp_path))
    assert not failures, "\n\n".join(str(failure) for failure in failures)


def test_every_tested_page_has_blocks_that_name_the_cli_by_its_path() -> None:
    assert len(IMPORT_PAGES) >= 9, "the bring-your-own-data pages moved"
    for page in TESTED_PAGES:
        blocks = shell_blocks(page)
        assert blocks, f"{page.name} has no shell block to run"
        for block in blocks:
            assert not BARE_CLI.search(block.code), (
                f"{block.where}: write .venv/bin/agentjudge (or a make target), not agentjudge"
            )


@pytest.mark.slow
def test_getting_started_runs_as_written(tmp_path: Path) -> None:
    _run_page(GETTING_STARTED, tmp_path)


@pytest.mark.slow  # each command starts the CLI (seconds); a page takes 10 s to minutes
@pytest.mark.parametrize("page", IMPORT_PAGES, ids=[page.stem for page in IMPORT_PAGES])
def test_bring_your_own_data_runs_as_written(page: Path, tmp_path: Path) -> None:
    _run_page(page, tmp_path)


def test_a_planted_broken_command_is_caught(tmp_path: Path) -> None:
    # A copy of the getting-started page with the middle command of a block misspelled: the
    # block's last command would still succeed, so only a runner that stops at the first failing
    # command sees the break. (The block as written runs in the slow test above.)
    text = GETTING_STARTED.read_text(encoding="utf-8")
    good = ".venv/bin/agentjudge datasets list\n"
    (block,) = [block for block in shell_blocks(GETTING_STARTED) if good in block.code]
    assert block.code.index(good) > 0
    assert not block.code.endswith(good)
    broken_text = text.replace(good, ".venv/bin/agentjudge datasets lst\n", 1)
    (broken,) = [b for b in shell_blocks(GETTING_STARTED, broken_text) if "datasets lst" in b.code]

    (failure,) = run_blocks([broken], project_copy(tmp_path))
    assert failure.block.where == f"docs/getting-started.md:{block.line}"
    assert failure.returncode == 2
    assert "lst" in failure.output
    assert "docs/getting-started.md" in str(failure)


def test_a_planted_missing_sample_path_is_caught(tmp_path: Path) -> None:
    page = DOCS / "import" / "spa-bench.md"
    text = page.read_text(encoding="utf-8").replace("session-first-session", "session-missing")
    blocks = shell_blocks(page, text)
    _require_shared(blocks)
    failures = run_blocks(blocks[:1], project_copy(tmp_path))
    assert len(failures) == 1
    assert "session-missing" in failures[0].output

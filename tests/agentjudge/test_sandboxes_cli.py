"""``agentjudge sandboxes``: gc removes what a dead run left and keeps a live run's; build-images
builds the images of the kinds named, each image once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

import environments.desktop.kind
import environments.images
import environments.leftovers
from agentjudge.cli import app
from environments.kind import ImageRecipe
from environments.registry import register_kind, unregister_kind
from sandboxes.runs import current_run, workdir
from tests.environments.notes_kind import NotesKind


def test_gc_removes_a_dead_runs_directory_and_keeps_the_live_one() -> None:
    dead = workdir() / "aj_deadbeef00"
    (dead / "aj_deadbeef00_fs_1" / "nested").mkdir(parents=True)
    (dead / "aj_deadbeef00_fs_1" / "nested" / "file.txt").write_text("left behind")
    (dead / "aj_deadbeef00_fs_1" / "nested").chmod(0o500)  # frozen trees are read-only
    live = current_run().directory()
    (live / "mine.txt").write_text("in use")
    result = CliRunner().invoke(app, ["sandboxes", "gc"])
    assert result.exit_code == 0, result.output
    assert not dead.exists()
    assert f"removed directory {dead}" in result.output
    assert (live / "mine.txt").read_text() == "in use"


def test_gc_takes_a_kinds_endpoint_and_the_dsn_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[Any] = []

    async def collect(endpoints: Any = None) -> list[str]:
        given.append(endpoints)
        return []

    monkeypatch.setattr(environments.leftovers, "collect_all_leftovers", collect)
    dsn = "postgresql://judge@127.0.0.1:5432/postgres"
    result = CliRunner().invoke(app, ["sandboxes", "gc", "--endpoint", f"postgres={dsn}"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["sandboxes", "gc", "--dsn", dsn])
    assert result.exit_code == 0, result.output
    assert "--dsn is deprecated; use --endpoint postgres=DSN" in result.output
    assert given == [{"postgres": dsn}, {"postgres": dsn}]


class _Builds:
    """Image recipes whose builds are counted (they build nothing)."""

    def __init__(self) -> None:
        self.built: list[str] = []

    def recipe(self, name: str, *, by_default: bool = True) -> ImageRecipe:
        def build(force: bool) -> str:
            self.built.append(name)
            return f"{name}:tag"

        return ImageRecipe(name, build, by_default=by_default)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Builds]:
    """Every kind's images replaced by counted recipes; two test kinds share a `shared` image
    and one of them has its own `notes` image, not built by default."""
    counted = _Builds()
    monkeypatch.setattr(environments.images, "SANDBOX_IMAGE", counted.recipe("sandbox"))
    monkeypatch.setattr(
        environments.desktop.kind, "DESKTOP_IMAGE", counted.recipe("desktop", by_default=False)
    )
    shared = counted.recipe("shared", by_default=False)
    own = counted.recipe("notes", by_default=False)

    class Notes(NotesKind):
        def images(self) -> list[ImageRecipe]:
            return [shared, own]

    class Jotter(NotesKind):
        name = "jotter"

        def images(self) -> list[ImageRecipe]:
            return [shared]

    register_kind(Notes())
    register_kind(Jotter())
    yield counted
    unregister_kind("notes")
    unregister_kind("jotter")


def _build(*arguments: str) -> Any:
    return CliRunner().invoke(app, ["sandboxes", "build-images", *arguments])


def test_build_images_builds_the_named_kinds_images_once_each(builds: _Builds) -> None:
    result = _build("--kind", "notes", "--kind", "jotter")
    assert result.exit_code == 0, result.output
    assert builds.built == ["shared", "notes"]
    assert "shared image (notes, jotter): shared:tag" in result.output
    assert "notes image (notes): notes:tag" in result.output


def test_build_images_builds_the_default_images_or_all(builds: _Builds) -> None:
    assert _build().exit_code == 0
    assert builds.built == ["sandbox"]
    builds.built.clear()
    assert _build("--all").exit_code == 0
    assert sorted(builds.built) == ["desktop", "notes", "sandbox", "shared"]


def test_the_desktop_flag_is_an_alias_that_warns(builds: _Builds) -> None:
    result = _build("--desktop")
    assert result.exit_code == 0, result.output
    assert builds.built == ["sandbox", "desktop"]
    assert "--desktop is deprecated; use --kind desktop" in result.output


def test_an_unknown_kind_is_a_usage_error(builds: _Builds) -> None:
    result = _build("--kind", "nowhere")
    assert result.exit_code == 2
    assert "no environment kind 'nowhere'" in result.output
    assert builds.built == []


@pytest.mark.docker
def test_build_images_builds_the_desktop_image_when_its_kind_is_named() -> None:
    from sandboxes.desktop.image import desktop_image_size, desktop_image_tag

    result = CliRunner().invoke(app, ["sandboxes", "build-images", "--kind", "desktop"])
    assert result.exit_code == 0, result.output
    assert "sandbox image" not in result.output  # the desktop kind runs only its own
    size = desktop_image_size(desktop_image_tag()) / 2**20
    assert f"desktop image (desktop): {desktop_image_tag()} ({size:.0f} MiB)" in result.output

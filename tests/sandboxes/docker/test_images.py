"""The locally built sandbox image: tag, cache, contents, and how build steps fail."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import docker
import pytest

from sandboxes.base import SandboxError
from sandboxes.docker import images, rootfs

pytestmark = pytest.mark.docker


def test_a_cached_image_is_returned_at_once_with_the_same_tag(sandbox_image: str) -> None:
    started = time.monotonic()
    again = images.build_sandbox_image()
    elapsed = time.monotonic() - started
    assert again == sandbox_image == images.sandbox_image_tag()
    assert sandbox_image == f"agentjudge/sandbox:{images.recipe_hash()}"
    assert elapsed < 2.0
    client = docker.from_env()
    try:
        labels = client.images.get(sandbox_image).labels
    finally:
        client.close()
    assert labels[rootfs.IMAGE_LABEL] == "sandbox"
    assert labels["agentjudge.recipe"] == images.recipe_hash()


async def test_the_async_wrapper_returns_the_same_tag(sandbox_image: str) -> None:
    assert await images.ensure_sandbox_image_async() == sandbox_image


def test_the_image_has_the_tools_and_a_ready_cluster(sandbox_image: str) -> None:
    client = docker.from_env()
    try:
        output = client.containers.run(
            sandbox_image,
            [
                "sh",
                "-c",
                "postgres --version; stat -c '%U %a' $PGDATA; "
                "for tool in find realpath stat mv ps tar sleep python3; do"
                " command -v $tool; done; "
                "cat $PGDATA/PG_VERSION; ls /usr/lib/x86_64-linux-gnu | grep -c LLVM || true",
            ],
            network_mode="none",
            remove=True,
        ).decode()
    finally:
        client.close()
    lines = output.splitlines()
    assert lines[0].startswith(f"postgres (PostgreSQL) {images.PG_MAJOR}.")
    assert lines[1] == "postgres 700"
    assert [line.rsplit("/", 1)[-1] for line in lines[2:10]] == [
        "find",
        "realpath",
        "stat",
        "mv",
        "ps",
        "tar",
        "sleep",
        "python3",  # runs the resident helper
    ]
    assert lines[10] == str(images.PG_MAJOR)
    assert lines[11] == "0"  # LLVM was dropped


def test_a_removed_image_is_rebuilt_from_the_cached_root_filesystem(
    sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Build under another repository name so the shared image stays in place for other tests.
    monkeypatch.setattr(images, "REPOSITORY", "agentjudge/sandbox-rebuild-test")

    def no_download(*_: object) -> None:
        raise AssertionError("a cached root filesystem must not be rebuilt")

    monkeypatch.setattr(rootfs, "build_rootfs", no_download)
    monkeypatch.setattr(rootfs, "download_packages", no_download)
    tag = images.build_sandbox_image()
    client = docker.from_env()
    try:
        assert tag == f"agentjudge/sandbox-rebuild-test:{images.recipe_hash()}"
        rebuilt, original = client.images.get(tag), client.images.get(sandbox_image)
        assert rebuilt.attrs["RootFS"]["Layers"] == original.attrs["RootFS"]["Layers"]
    finally:
        client.images.remove(tag)
        client.close()


def test_force_rebuilds_and_drops_the_replaced_image(
    sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(images, "REPOSITORY", "agentjudge/sandbox-force-test")
    cached = rootfs.cache_directory() / f"sandbox-rootfs-{images.recipe_hash()}.tar"
    assert cached.exists()
    steps: list[str] = []

    def download(recipe: rootfs.RootfsRecipe, mirror: str) -> Path:
        steps.append("download")
        return Path("/nonexistent/packages.tgz")

    def build_rootfs(recipe: rootfs.RootfsRecipe, packages: Path, mirror: str, tree: Path) -> None:
        steps.append("rootfs")
        assert tree == cached  # rebuilt in place, from the (cached) packages

    monkeypatch.setattr(rootfs, "download_packages", download)
    monkeypatch.setattr(rootfs, "build_rootfs", build_rootfs)
    client = docker.from_env()
    tag = images.build_sandbox_image()
    try:
        assert steps == []  # the root filesystem was cached: import only
        first = client.images.get(tag).id
        assert first is not None
        assert images.build_sandbox_image(force=True) == tag
        assert steps == ["download", "rootfs"]
        assert client.images.get(tag).id != first
        with pytest.raises(docker.errors.ImageNotFound):
            client.images.get(first)
    finally:
        client.images.remove(tag)
        client.close()


def test_a_failing_step_is_named_with_its_stderr() -> None:
    with pytest.raises(SandboxError, match=r"step 'initdb' failed \(exit 3\): disk on fire"):
        rootfs.run_step("initdb", ["sh", "-c", "echo disk on fire >&2; exit 3"], timeout=10)


def test_a_hanging_step_times_out() -> None:
    started = time.monotonic()
    with pytest.raises(SandboxError, match=r"step 'debootstrap' timed out"):
        rootfs.run_step("debootstrap", ["sleep", "30"], timeout=0.5)
    assert time.monotonic() - started < 10


def test_the_cache_directory_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert rootfs.cache_directory() == tmp_path / "agentjudge"
    assert (tmp_path / "agentjudge").is_dir()


def test_images_of_earlier_recipes_are_pruned_with_their_cache(
    sandbox_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    client = docker.from_env()
    old_tag = f"{images.REPOSITORY}:0ldrecipe000"
    client.images.get(sandbox_image).tag(images.REPOSITORY, "0ldrecipe000")
    cached = rootfs.cache_directory() / "sandbox-rootfs-0ldrecipe000.tar"
    cached.write_bytes(b"an old root filesystem")
    try:
        # Images of real earlier recipes on this machine go too; the planted one must.
        assert old_tag in rootfs.prune_other_recipes(client, images.sandbox_recipe())
        assert old_tag not in [tag for image in client.images.list() for tag in image.tags]
        assert not cached.exists()
        assert client.images.get(sandbox_image) is not None  # the current one stays
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(old_tag)  # only when the prune failed
        client.close()

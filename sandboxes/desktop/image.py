"""The desktop image: a LibreOffice desktop built locally from Debian packages, never pulled.

``agentjudge/desktop:<recipe hash>`` serves every ``docker`` desktop. It is a Debian bookworm
minbase root filesystem (``debootstrap``, as the sandbox image in ``sandboxes.docker.images``),
then ``apt-get install --no-install-recommends`` in the chroot (debootstrap's own resolver picks
LibreOffice's GUI-less core against the GTK3 plugin and cannot choose among virtual packages),
with what a desktop needs and nothing started by default: Xvfb, the openbox window manager, a
session D-Bus, the AT-SPI bus and registry, LibreOffice Writer, Calc and Impress with the GTK3
VCL plugin (their widgets reach the accessibility tree through ATK), metric-compatible fonts for
Office documents, python3 with GObject introspection, pyatspi, Xlib, Pillow and lxml for the
control server, and pyautogui (from PyPI, pure Python) for recorded agent code. The desktop's
user is ``user`` (uid 1000) with its home in ``/home/user``, as on OSWorld's VM, so recorded
paths stay valid. LibreOffice's profile (with the session's settings) is made at build time: a
first start that creates it costs seconds.

The session itself (which processes start, with which variables) is not baked in: the ``docker``
backend starts it from the repository (``sandboxes.desktop.docker``), so changing it needs no
rebuild. ``sandboxes.docker.rootfs`` builds it as it builds the sandbox image (root and
debootstrap required; the minbase tarball and the packed root filesystem cached under
``~/.cache/agentjudge``, the downloaded packages too) and takes a few minutes once per machine:
``make images`` or ``agentjudge sandboxes build-images --desktop``.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import docker.errors

from sandboxes.base import SandboxError
from sandboxes.desktop.control_server.session import PROFILE_SETTINGS
from sandboxes.desktop.desktop_python import PACKAGES as PACKAGES_FROM_PYPI
from sandboxes.docker.rootfs import (
    IMAGE_LABEL,
    RootfsRecipe,
    build_image,
    cache_directory,
    docker_client,
    recipe_digest,
    run_in_root,
    run_step,
)

logger = logging.getLogger(__name__)

BUILD_COMMAND = "make images (agentjudge sandboxes build-images --desktop)"
"""How a person builds the desktop image; quoted by errors about a missing image."""

REPOSITORY = "agentjudge/desktop"
"""The image repository; the tag is the recipe hash."""

USER = "user"
"""The desktop's unprivileged user, named as on OSWorld's VM."""
UID = 1000
HOME = f"/home/{USER}"
RUNTIME_DIR = f"/run/user/{UID}"
"""The user's runtime folder (``XDG_RUNTIME_DIR``: D-Bus and GTK keep sockets there)."""

SUITE = "bookworm"
"""The Debian release of the image: the one this project's hosts run, so a desktop in a container
has the same LibreOffice (7.4, near the 7.3 of OSWorld's VM), GTK, themes and fonts as a local
one, and a run recorded on either backend replays step for step on the other (with trixie's
LibreOffice 25.2 the widgets' roles and drawing differ at every step)."""

PACKAGES = (
    # the screen, the window manager, the buses
    "xvfb",
    "openbox",
    "dbus",
    "dbus-x11",
    "at-spi2-core",
    # LibreOffice with the GTK3 plugin (the accessibility tree comes from ATK)
    "libreoffice-writer",
    "libreoffice-calc",
    "libreoffice-impress",
    "libreoffice-gtk3",
    "libreoffice-core",
    # the icons and themes a host install of LibreOffice brings as recommendations
    "libreoffice-style-colibre",
    "adwaita-icon-theme",
    "hicolor-icon-theme",
    # fonts: the set a host gets from .ci/run's packages (DejaVu, the Liberation and
    # Carlito/Caladea metric clones of Office fonts, and the fallbacks they bring), so
    # font substitution picks the same faces on both backends
    "fonts-dejavu-core",
    "fonts-dejavu-extra",
    "fonts-liberation",
    "fonts-liberation2",
    "fonts-crosextra-carlito",
    "fonts-crosextra-caladea",
    "fonts-noto-mono",
    "fonts-droid-fallback",
    "fonts-urw-base35",
    # the English spelling dictionary a host install of LibreOffice brings as a recommendation:
    # without it no wavy line marks an unknown word, and every screen recorded with those lines
    # differs from its replay in fine detail
    "hunspell-en-us",
    # what the control server and recorded pyautogui code use
    "python3",
    "python3-gi",
    "gir1.2-atspi-2.0",
    "gir1.2-gtk-3.0",
    "python3-pyatspi",
    "python3-xlib",
    "python3-pil",
    "python3-lxml",
    "python3-tk",
    "scrot",
    "xdotool",
    "wmctrl",
    "x11-utils",
    "procps",
)
"""Installed on minbase with apt: their dependencies, never their recommendations."""

PYPI_PACKAGES = PACKAGES_FROM_PYPI
"""pyautogui and its pure-Python dependencies, the versions local desktops use (Xlib and
Pillow come from Debian)."""

SITE_PACKAGES = "/usr/lib/python3/dist-packages"
"""Where the PyPI packages go: on the path of every Debian python3."""

_PREPARE = f"""set -eu
useradd --create-home --uid {UID} --shell /bin/sh {USER}
mkdir -p {HOME}/Desktop {HOME}/Documents
chown -R {UID}:{UID} {HOME}
install -d -m 700 -o {UID} -g {UID} {RUNTIME_DIR}
dbus-uuidgen --ensure
"""
"""Runs in the chroot as root before the PyPI packages are added."""

OFFICE_PROFILE = f"{HOME}/.office-profile"
"""LibreOffice's profile, made at build time (a first start creating it costs seconds)."""

OFFICE_VERSION = "7.4"
"""Bookworm's LibreOffice series, written into the profile so no what's-new bar shows."""

_OFFICE_SETTINGS = PROFILE_SETTINGS.format(version=OFFICE_VERSION)

_PROFILE = f"""set -eu
mkdir -p {OFFICE_PROFILE}/user
cat > {OFFICE_PROFILE}/user/registrymodifications.xcu <<'SETTINGS'
{_OFFICE_SETTINGS}
SETTINGS
chown -R {UID}:{UID} {OFFICE_PROFILE}
"""
"""Runs in the chroot as root: the session's profile settings, before LibreOffice fills the rest
in (``soffice --headless --terminate_after_init`` as the desktop's user)."""

_FINISH = f"""set -eu
python3 - <<'EOF'
import compileall, sys
sys.exit(0 if compileall.compile_dir("{SITE_PACKAGES}", quiet=1) else 1)
EOF
# Trimming: documentation, manuals and the message catalogues of other languages (LibreOffice's
# UI stays English). The English ones stay: GTK names keys in menus through them ("Backspace",
# not the key's symbol name "BackSpace"), so a menu as wide as on a host needs them.
rm -rf /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/help/* \\
    /var/cache/apt/archives/*.deb /var/lib/apt/lists/* /var/log/*.log /tmp/* /var/tmp/*
find /usr/share/locale -mindepth 1 -maxdepth 1 ! -name en -exec rm -rf {{}} +
# Xvfb runs unprivileged: the folder of X sockets must exist already.
install -d -m 1777 /tmp/.X11-unix
# Font caches last: a package's trigger can change a font folder after fontconfig's own trigger
# has cached it, and a stale cache makes every program of every desktop scan those fonts again.
fc-cache --system-only
"""
"""Runs in the chroot as root at the end: bytecode for the added packages, trimming, and font
caches that match the font folders."""

_CHANGES = (
    'CMD ["sleep", "infinity"]',
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    f"ENV HOME={HOME}",
    f"LABEL {IMAGE_LABEL}=desktop",
)

_RECIPE_VERSION = 4


def recipe_hash() -> str:
    """A short hash of everything that determines the image's content."""
    return recipe_digest(
        _RECIPE_VERSION, SUITE, PACKAGES, PYPI_PACKAGES, _PREPARE, _PROFILE, _FINISH, _CHANGES
    )


def desktop_image_tag() -> str:
    """The tag the current recipe builds: ``agentjudge/desktop:<recipe hash>``."""
    return f"{REPOSITORY}:{recipe_hash()}"


def _mount_proc(root: Path) -> None:
    run_step(
        "mount /proc (desktop)", ["mount", "-t", "proc", "proc", str(root / "proc")], timeout=30
    )


def _apt_install(root: Path) -> None:
    """Install ``PACKAGES`` in the chroot with apt (its resolver handles the alternatives and
    virtual packages debootstrap's cannot), without recommendations, no service started; the
    downloaded packages are kept in the cache for the next build."""
    debs = cache_directory() / f"desktop-debs-{recipe_digest(SUITE, PACKAGES)}"
    debs.mkdir(exist_ok=True)
    archives = root / "var/cache/apt/archives"
    resolver = root / "etc/resolv.conf"
    resolver.unlink(missing_ok=True)  # never write through a link out of the chroot
    shutil.copyfile("/etc/resolv.conf", resolver)
    (root / "usr/sbin/policy-rc.d").write_text("#!/bin/sh\nexit 101\n")
    (root / "usr/sbin/policy-rc.d").chmod(0o755)
    _mount_proc(root)
    run_step("mount debs (desktop)", ["mount", "--bind", str(debs), str(archives)], timeout=30)
    try:
        environment = ["env", "DEBIAN_FRONTEND=noninteractive", "LANG=C.UTF-8"]
        run_step(
            "apt-get update (desktop)",
            ["chroot", str(root), *environment, "apt-get", "update", "-qq"],
            timeout=600,
        )
        run_step(
            "apt-get install (desktop)",
            [
                "chroot",
                str(root),
                *environment,
                "apt-get",
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "-o",
                "APT::Keep-Downloaded-Packages=true",
                *PACKAGES,
            ],
            timeout=3600,
        )
    finally:
        for point in (archives, root / "proc"):
            subprocess.run(
                ["umount", "-l", str(point)], capture_output=True, timeout=60, check=False
            )
        (root / "usr/sbin/policy-rc.d").unlink(missing_ok=True)
        resolver.unlink(missing_ok=True)


def _add_pypi_packages(root: Path) -> None:
    """pyautogui and its dependencies, installed by the host's pip into the image's path
    (pure Python, so the host interpreter's version does not matter)."""
    run_step(
        "pip install pyautogui (desktop)",
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            "--target",
            str(root / SITE_PACKAGES.lstrip("/")),
            *PYPI_PACKAGES,
        ],
        timeout=600,
    )


def _make_profile(root: Path) -> None:
    run_in_root("profile settings (desktop)", root, _PROFILE, timeout=60)
    _mount_proc(root)
    try:
        run_step(
            "profile (desktop)",
            [
                "chroot",
                f"--userspec={UID}:{UID}",
                str(root),
                "env",
                f"HOME={HOME}",
                "LANG=C.UTF-8",
                "soffice",
                "--headless",
                "--norestore",
                "--terminate_after_init",
                f"-env:UserInstallation=file://{OFFICE_PROFILE}",
            ],
            timeout=300,
        )
    finally:
        subprocess.run(
            ["umount", "-l", str(root / "proc")], capture_output=True, timeout=60, check=False
        )


def _configure(root: Path) -> None:
    logger.info("installing the desktop packages with apt (a few minutes)")
    _apt_install(root)
    run_in_root("prepare (desktop)", root, _PREPARE, timeout=120)
    _add_pypi_packages(root)
    logger.info("creating the LibreOffice profile")
    _make_profile(root)
    run_in_root("finish (desktop)", root, _FINISH, timeout=600)


def desktop_recipe() -> RootfsRecipe:
    """The current recipe of the desktop image, for ``sandboxes.docker.rootfs``: plain minbase
    from debootstrap, everything else from ``_configure``."""
    return RootfsRecipe(
        name="desktop",
        repository=REPOSITORY,
        digest=recipe_hash(),
        suite=SUITE,
        include=(),
        changes=_CHANGES,
        configure=_configure,
        engine_timeout=900,
    )


def build_desktop_image(force: bool = False) -> str:
    """Build the desktop image unless it exists (``force``: rebuild anyway); return its tag.

    Needs root (debootstrap, chroot) and the Docker engine; a cached call costs one engine query.
    """
    return build_image(desktop_recipe(), force)


def desktop_image_size(tag: str | None = None) -> int:
    """The image's size in bytes, as the engine reports it."""
    client = docker_client()
    try:
        return int(client.images.get(tag or desktop_image_tag()).attrs["Size"])
    except docker.errors.ImageNotFound as error:
        raise SandboxError(f"image {tag or desktop_image_tag()} is missing") from error
    finally:
        client.close()


async def ensure_desktop_image_async() -> str:
    """The desktop image's tag, building the image first (in a worker thread) when missing."""
    return await asyncio.to_thread(build_desktop_image, False)

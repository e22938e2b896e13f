"""The allow-list pickle loader: refuses what it does not know, runs nothing, decodes data."""

from __future__ import annotations

import builtins
import gzip
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from dataset.importers.mobile import pickles
from dataset.importers.mobile.pickles import (
    UnsafePickleError,
    load_gzipped_pickle,
    load_pickle_bytes,
    plain_value,
)


class _Calls:
    """Pickles as a call of ``function`` with ``arguments``."""

    def __init__(self, function: Any, *arguments: Any) -> None:
        self.function = function
        self.arguments = arguments

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.function, self.arguments)


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (os.system, "system"),
        (builtins.eval, "builtins.eval"),
        (builtins.exec, "builtins.exec"),
        (subprocess.Popen, "subprocess.Popen"),
        (builtins.getattr, "builtins.getattr"),
        (builtins.__import__, "builtins.__import__"),
    ],
)
def test_hostile_pickles_are_refused_without_running(
    tmp_path: Path, function: Any, name: str
) -> None:
    marker = tmp_path / "ran"
    payloads = {
        "system": (f"touch {marker}",),
        "builtins.eval": (f"open({str(marker)!r}, 'w')",),
        "builtins.exec": (f"open({str(marker)!r}, 'w')",),
        "subprocess.Popen": (["touch", str(marker)],),
        "builtins.getattr": ("text", "upper"),
        "builtins.__import__": ("os",),
    }
    data = pickle.dumps([{"goal": _Calls(function, *payloads[name])}])
    short = name.rsplit(".", maxsplit=1)[-1]
    with pytest.raises(UnsafePickleError, match=rf"names \S*{short}\b"):
        load_pickle_bytes(data)
    assert not marker.exists()


def test_referenced_classes_become_stand_ins_and_are_never_imported() -> None:
    # A protocol-0 pickle naming classes of modules this process has never seen.
    data = (
        b"(lp0\n(dp1\nVaction\np2\nccopy_reg\n_reconstructor\np3\n"
        b"(candroid_world.env.json_action\nJSONAction\np4\nc__builtin__\nobject\np5\nNtp6\n"
    )
    with pytest.raises(UnsafePickleError, match=r"copy_reg\._reconstructor"):
        load_pickle_bytes(data + b"Rp7\n(dp8\nVaction_type\np9\nVclick\np10\nsbsa.")
    assert "android_world" not in sys.modules
    # The modern protocol: NEWOBJ + BUILD on a stand-in.
    stand_in = pickles._AllowListUnpickler(b"").find_class("android_world.env.x", "Thing")
    instance = stand_in.__new__(stand_in)
    instance.__setstate__({"text": "New", "bbox": None})
    assert plain_value([instance]) == [{"text": "New", "bbox": None}]
    assert "android_world" not in sys.modules


@pytest.mark.parametrize(
    "array",
    [
        np.arange(24, dtype=np.uint8).reshape(2, 4, 3),
        np.asfortranarray(np.arange(12, dtype=">f4").reshape(3, 4)),
        np.array([[True, False]]),
    ],
)
def test_numeric_arrays_decode_from_their_bytes(array: np.ndarray) -> None:
    loaded = plain_value(load_pickle_bytes(pickle.dumps({"screen": array})))
    assert loaded["screen"].dtype == array.dtype
    assert np.array_equal(loaded["screen"], array)


def test_object_arrays_and_scalars() -> None:
    with pytest.raises(UnsafePickleError, match="not a plain numeric type"):
        plain_value(load_pickle_bytes(pickle.dumps(np.array(["a", 1], dtype=object))))
    values = plain_value(load_pickle_bytes(pickle.dumps([np.float64(0.75), np.int32(-3)])))
    assert values == [0.75, -3]


def test_pil_images_decode_to_pixels() -> None:
    image = Image.new("RGB", (3, 2), (10, 20, 30))
    loaded = plain_value(load_pickle_bytes(pickle.dumps(image)))
    assert np.asarray(loaded).shape == (2, 3, 3)
    assert tuple(np.asarray(loaded)[1, 2]) == (10, 20, 30)


def test_damaged_and_oversized_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "episode.pkl.gz"
    path.write_bytes(gzip.compress(pickle.dumps([{"goal": "g"}])))
    assert load_gzipped_pickle(path) == [{"goal": "g"}]
    path.write_bytes(gzip.compress(pickle.dumps([{"goal": "g" * 50}]))[:-12])
    with pytest.raises(UnsafePickleError, match="not a readable gzip file"):
        load_gzipped_pickle(path)
    path.write_bytes(gzip.compress(pickle.dumps([{"goal": "g" * 50}])[:20]))
    with pytest.raises(UnsafePickleError, match="not a readable pickle"):
        load_gzipped_pickle(path)
    monkeypatch.setattr(pickles, "MAX_UNPACKED_BYTES", 100)
    path.write_bytes(gzip.compress(b"x" * 1000))
    with pytest.raises(UnsafePickleError, match="unpacks to more than 100 bytes"):
        load_gzipped_pickle(path)

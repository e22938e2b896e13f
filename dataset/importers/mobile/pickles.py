"""Reading untrusted pickles (AndroidWorld's gzipped checkpoints) without running their code.

A pickle is a program: loading one with ``pickle.load`` imports and calls whatever it names. This
loader never imports or calls a name the pickle gives. Each name is looked up in an allow-list:
a few plain data types are used as they are (``OrderedDict``, ``datetime`` values, sets), the
classes AndroidWorld's episodes reference (``android_world``, ``requests``, ``http.cookiejar``,
numpy arrays and scalars, PIL images) become inert stand-ins that only record their arguments
and state, and any other name (``os.system``, ``builtins.eval``, ``subprocess.Popen``, ...)
stops the load with ``UnsafePickleError`` naming it. After loading, ``plain_value`` turns the
stand-ins into plain data: numeric numpy arrays and PIL images are decoded from their raw bytes
(never by calling numpy's or PIL's unpickling hooks), any other stand-in becomes the dict of its
recorded fields.
"""

from __future__ import annotations

import collections
import datetime
import gzip
import io
import pickle
from pathlib import Path
from typing import Any, ClassVar

__all__ = [
    "MAX_UNPACKED_BYTES",
    "PickledObject",
    "UnsafePickleError",
    "load_gzipped_pickle",
    "load_pickle_bytes",
    "plain_value",
]

MAX_UNPACKED_BYTES = 2 * 1024**3
"""A gzipped pickle that unpacks to more than this is refused (a compression bomb, not a run)."""


class UnsafePickleError(ValueError):
    """A pickle that names something outside the allow-list, or cannot be read safely."""


class PickledObject:
    """An inert stand-in for a class a pickle referenced: records what the pickle gave it."""

    module: ClassVar[str] = ""
    name: ClassVar[str] = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> PickledObject:
        instance = super().__new__(cls)
        instance.args = args
        instance.kwargs = kwargs
        instance.state = None
        instance.items = {}
        instance.appended = []
        return instance

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The pickle's REDUCE calls the class; everything was recorded by __new__.
        pass

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    state: Any
    items: dict[Any, Any]
    appended: list[Any]

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __setitem__(self, key: Any, value: Any) -> None:
        self.items[key] = value

    def append(self, value: Any) -> None:
        """Called by the pickle's APPEND for list-like classes."""
        self.appended.append(value)

    def extend(self, values: Any) -> None:
        """Called by the pickle's APPENDS for list-like classes."""
        self.appended.extend(values)

    @classmethod
    def qualified_name(cls) -> str:
        """``module.name`` as the pickle wrote it."""
        return f"{cls.module}.{cls.name}"


_REAL_TYPES: dict[tuple[str, str], object] = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("datetime", "datetime"): datetime.datetime,
    ("datetime", "date"): datetime.date,
    ("datetime", "time"): datetime.time,
    ("datetime", "timedelta"): datetime.timedelta,
    ("datetime", "timezone"): datetime.timezone,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("__builtin__", "set"): set,
}
"""Plain data types whose constructors only build values: used as they are."""

_STAND_IN_MODULES = ("android_world", "requests", "http.cookiejar", "urllib3", "PIL")
"""Modules whose classes AndroidWorld's episodes hold; they become inert stand-ins."""

_NUMPY_NAMES = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
}
"""numpy's names in pickled arrays and scalars; stand-ins here, decoded by ``plain_value``."""


def _allowed_stand_in(module: str, name: str) -> bool:
    if (module, name) in _NUMPY_NAMES:
        return True
    return any(module == root or module.startswith(root + ".") for root in _STAND_IN_MODULES)


class _AllowListUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self._stand_ins: dict[tuple[str, str], type[PickledObject]] = {}

    def find_class(self, module: str, name: str) -> Any:
        real = _REAL_TYPES.get((module, name))
        if real is not None:
            return real
        if not _allowed_stand_in(module, name):
            raise UnsafePickleError(
                f"the pickle names {module}.{name}, which is not on the allow-list of what "
                "these episodes hold; nothing was imported or run"
            )
        key = (module, name)
        if key not in self._stand_ins:
            self._stand_ins[key] = type(
                f"StandIn_{name}", (PickledObject,), {"module": module, "name": name}
            )
        return self._stand_ins[key]

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("the pickle uses persistent ids, which are refused")


def load_pickle_bytes(data: bytes) -> Any:
    """The value a pickle holds, with every referenced class replaced by a stand-in."""
    try:
        return _AllowListUnpickler(data).load()
    except UnsafePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as error:
        raise UnsafePickleError(f"not a readable pickle: {error}") from None
    except (IndexError, KeyError, RecursionError) as error:
        raise UnsafePickleError(f"a damaged pickle: {type(error).__name__}") from None


def load_gzipped_pickle(path: Path) -> Any:
    """The value a gzipped pickle file holds (``UnsafePickleError`` when it is refused)."""
    try:
        with gzip.open(path, "rb") as stream:
            data = stream.read(MAX_UNPACKED_BYTES + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise UnsafePickleError(f"not a readable gzip file: {error}") from None
    if len(data) > MAX_UNPACKED_BYTES:
        raise UnsafePickleError(f"unpacks to more than {MAX_UNPACKED_BYTES} bytes")
    return load_pickle_bytes(data)


def plain_value(value: Any) -> Any:
    """``value`` with stand-ins replaced by plain data: numpy arrays as ``numpy.ndarray``
    (decoded from their raw bytes), numpy scalars as Python numbers, PIL images as RGB arrays,
    other stand-ins as the dict of their fields (their state, else ``args``/``items``)."""
    if isinstance(value, PickledObject):
        decoded = _decode_known(value)
        if decoded is not _UNDECODED:
            return decoded
        return _fields(value)
    if isinstance(value, dict):
        return {plain_value(key): plain_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_value(item) for item in value)
    return value


_UNDECODED = object()


def _fields(value: PickledObject) -> dict[str, Any]:
    state = value.state
    if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
        merged = dict(state[0] or {})
        merged.update(state[1])
        state = merged
    if isinstance(state, dict):
        fields = {str(key): plain_value(item) for key, item in state.items()}
    else:
        fields = {}
        if value.args:
            fields["args"] = plain_value(list(value.args))
        if state is not None:
            fields["state"] = plain_value(state)
    if value.items:
        fields["items"] = plain_value(value.items)
    if value.appended:
        fields["appended"] = plain_value(value.appended)
    return fields


def _decode_known(value: PickledObject) -> Any:
    kind = type(value)
    if kind.name == "_reconstruct" and kind.module.startswith("numpy"):
        return _array(value)
    if kind.name == "scalar" and kind.module.startswith("numpy"):
        dtype = _dtype(value.args[0]) if len(value.args) == 2 else None
        raw = value.args[1] if len(value.args) == 2 else None
        if dtype is None or not isinstance(raw, bytes):
            raise UnsafePickleError("a numpy scalar without a numeric dtype and its bytes")
        import numpy as np

        return np.frombuffer(raw, dtype=dtype, count=1)[0].item()
    if kind.module.startswith("PIL") and isinstance(value.state, list | tuple):
        return _image(value)
    return _UNDECODED


def _dtype(value: Any) -> Any:
    import numpy as np

    if not isinstance(value, PickledObject) or type(value).name != "dtype" or not value.args:
        return None
    code = value.args[0]
    if not isinstance(code, str) or code[:1] not in "biuf?" or code.startswith("O"):
        raise UnsafePickleError(f"numpy dtype {code!r} is not a plain numeric type")
    dtype = np.dtype(code)
    state = value.state
    if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">"):
        dtype = dtype.newbyteorder(state[1])
    return dtype


def _array(value: PickledObject) -> Any:
    import numpy as np

    state = value.state
    if not isinstance(state, tuple) or len(state) != 5:
        raise UnsafePickleError("a numpy array without its (version, shape, dtype, order, data)")
    _version, shape, dtype_stand_in, fortran, raw = state
    dtype = _dtype(dtype_stand_in)
    if dtype is None:
        raise UnsafePickleError("a numpy array without a dtype")
    if not isinstance(raw, bytes | bytearray):
        raise UnsafePickleError("a numpy array of objects (only numeric arrays are read)")
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise UnsafePickleError(f"a numpy array with shape {shape!r}")
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if expected != len(raw):
        raise UnsafePickleError(
            f"a numpy array of shape {shape} needs {expected} bytes, the pickle holds {len(raw)}"
        )
    return np.frombuffer(bytes(raw), dtype=dtype).reshape(shape, order="F" if fortran else "C")


def _image(value: PickledObject) -> Any:
    import numpy as np
    from PIL import Image

    state = list(value.state)
    mode = next((part for part in state if isinstance(part, str)), None)
    size = next((part for part in state if isinstance(part, tuple) and len(part) == 2), None)
    raw = state[-1] if state and isinstance(state[-1], bytes) else None
    if mode is None or size is None or raw is None:
        return _UNDECODED
    try:
        image = Image.frombytes(mode, size, raw)
    except (ValueError, TypeError) as error:
        raise UnsafePickleError(f"a PIL image that does not decode: {error}") from None
    return np.asarray(image.convert("RGB"))

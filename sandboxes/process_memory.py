"""How this process's memory allocator treats the large buffers of screens: kept for reuse.

A screen is megabytes of pixels (2 MB in grey, 6 MB in colour at 1920x1080), and a replay makes
and drops several such buffers a step. glibc hands buffers that large to the kernel on their own
(``mmap``) and gives them back when they are freed, so every new one is faulted in and zeroed
page by page again: 2,600 page faults a screen comparison, half of its CPU time. With the
thresholds raised, freed buffers stay in the heap for the next ones (the process keeps about its
peak use). Where the C library is not glibc nothing changes.
"""

from __future__ import annotations

import ctypes

__all__ = ["keep_freed_buffers"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 2**20
"""The largest ``mmap`` threshold glibc accepts on 64-bit machines: buffers below it come from
the heap."""
_TRIM_THRESHOLD = 256 * 2**20
"""Free memory at the heap's top above which glibc gives it back to the kernel."""


def keep_freed_buffers() -> bool:
    """Raise glibc's ``mmap`` and trim thresholds for this process; whether it took effect."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )

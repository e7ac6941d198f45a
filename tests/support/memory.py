"""What objects really cost this process: glibc's live bytes (its heap's chunks in use and
its mapped blocks, mallinfo2), pymalloc's (its allocated blocks, which live in arenas
glibc does not see) and Arrow's default pool's where it is not the system allocator
(mimalloc's pages are not glibc's). Linux with glibc 2.33+ and CPython only
(`measurable`)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from typing import Any

FIELDS = (
    "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
    "fordblks", "keepcost",
)  # fmt: skip


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS]


@cache
def _mallinfo2() -> Any:
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    if libc is None or not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _Mallinfo2
    return libc.mallinfo2


def measurable() -> bool:
    return _mallinfo2() is not None and hasattr(sys, "_debugmallocstats")


def _pymalloc_bytes() -> int:
    """pymalloc's '# bytes in allocated blocks' (sys._debugmallocstats writes to fd 2)."""
    with tempfile.TemporaryFile(mode="w+") as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        for line in sink:
            if line.startswith("# bytes in allocated blocks"):
                return int(line.split("=")[1].replace(",", ""))
    raise AssertionError("pymalloc's statistics without allocated blocks")


def live_bytes() -> int:
    import pyarrow as pa

    gc.collect()
    info = _mallinfo2()()
    pool = pa.default_memory_pool()
    arrow = 0 if pool.backend_name == "system" else pool.bytes_allocated()
    return int(info.uordblks + info.hblkhd) + _pymalloc_bytes() + arrow


def cost_of(make: Callable[[], Any], copies: int = 20) -> tuple[float, Any]:
    """The live bytes one value of `make()` holds (the mean of `copies` kept at once, after
    two made and dropped: lazily built things of the libraries are not counted), and one
    of the values."""
    for _ in range(2):
        make()
    before = live_bytes()
    kept = [make() for _ in range(copies)]
    after = live_bytes()
    list_bytes = sys.getsizeof(kept)
    return (after - before - list_bytes) / copies, kept[0]

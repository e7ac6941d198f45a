"""Freed memory handed back to the system, for a long-running process (the daemon) whose
memory should follow what its cache holds (STATLAS_CACHE_MB): glibc's thresholds fixed,
Arrow on the system allocator (its native default too: `arrow_on_system_allocator` before
pyarrow loads), and glibc's free heap pages returned after requests and after the cache
drops entries (at most once a second, off the request's thread). Linux (glibc);
elsewhere, where there is no malloc_trim, only Arrow's pool is set."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
from functools import lru_cache
from typing import Any

M_TRIM_THRESHOLD = -1  # glibc mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
# glibc's thresholds, fixed (not grown with the largest block freed): blocks from
# MAPPED_BLOCK_BYTES on are mapped by themselves (a cache's large arrays, handed back whole
# when dropped); the heap is shrunk when TRIM_THRESHOLD_BYTES are free at its top. Low
# thresholds cost time: at 128 KB each of an estimate's temporary arrays was a fresh
# mapping, zero-filled page by page, and a TPC-H estimate took 1.7x as long
MAPPED_BLOCK_BYTES = 4 * 1024 * 1024
TRIM_THRESHOLD_BYTES = 32 * 1024 * 1024
RELEASE_INTERVAL_S = 1.0  # at most one release a second

_last_release = 0.0
_release_due = False  # a release is scheduled (memory_freed)
_release_lock = threading.Lock()
_handing_back = False  # tune_allocator was called: this process hands freed memory back


ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def arrow_on_system_allocator() -> bool:
    """Arrow's native default pool on the system allocator, for this whole process: set
    before pyarrow loads (Arrow reads ARROW_DEFAULT_MEMORY_POOL once, then), unless the
    environment chose a pool. `pa.set_memory_pool` (tune_allocator) reaches only pyarrow's
    own calls: Acero (a sample's group_by and join) allocates from the native default,
    mimalloc, whose freed pages stay with it (TPC-H's latency set in one process: ~30 MB
    of growth, none of it live). False when it came too late (pyarrow loaded) or the
    environment chose another pool."""
    if "pyarrow" in sys.modules:
        return False
    return os.environ.setdefault(ARROW_POOL_VARIABLE, "system") == "system"


@lru_cache(maxsize=1)
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def tune_allocator() -> None:
    """For a long-running process whose large arrays come and go (a cache's samples): glibc's
    mapping and trimming thresholds fixed (MAPPED_BLOCK_BYTES, TRIM_THRESHOLD_BYTES; freed
    heap pages are handed back by `release_freed_memory` after requests, not by each free),
    and Arrow
    allocates from the system allocator, whose freed pages `release_freed_memory` can hand
    back too (mimalloc and jemalloc keep them for reuse)."""
    global _handing_back
    _handing_back = True
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, MAPPED_BLOCK_BYTES)
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def release_freed_memory() -> None:
    """Hand freed heap pages back to the system (glibc's malloc_trim; Arrow's pool)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def memory_freed() -> None:
    """Something large was freed (a request's working memory, a cache's entries): in a
    process that hands memory back (`tune_allocator`), `release_freed_memory` on a
    background thread, at once or, when one ran within the last RELEASE_INTERVAL_S, at the
    interval's end (a trim of a large heap takes milliseconds: never on a request's path,
    never once per request; but what a burst of requests freed is handed back within the
    interval of its last one, not kept until the next request)."""
    global _release_due
    if not _handing_back:
        return
    with _release_lock:
        if _release_due:
            return  # a release is due: it will hand back this memory too
        _release_due = True
        delay = max(0.0, _last_release + RELEASE_INTERVAL_S - time.monotonic())
    timer = threading.Timer(delay, _release)
    timer.name, timer.daemon = "statlas-release", True
    timer.start()


def _release() -> None:
    global _last_release, _release_due
    with _release_lock:
        _release_due = False
        _last_release = time.monotonic()
    release_freed_memory()

"""A bounded, process-wide cache of what estimates read: merged statistics, pooled samples
and partition row counts of a table's partition selections, so that a daemon (or a Python
caller) planning many queries merges each selection's sketches once.

Entries are keyed by the table's *stamp* (metastore.catalog.stamps: its id, its version, its
newest collection run and its creation time) and by the selection. A reader asks for the
stamps of the tables it reads in one indexed query (`table_stamps`) and takes an entry only
under the same stamp, so a collection or registration committed by any process (another
CLI, the daemon's scheduler) is seen by the next request; entries of an older stamp are
dropped then. The cache holds at most `STATLAS_CACHE_MB` (default 256) megabytes by the
sizes its entries report (`approximate_size`), least recently used first out. An entry that
grows while it is read (a sample materialising a column, `Sample.watch`) reports it, and the
cache counts it then.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
from sqlalchemy import Engine

from metastore.catalog.stamps import TableStamp as TableStamp
from metastore.catalog.stamps import table_stamps as table_stamps
from metastore.errors import InvalidValue

_DROP_CALLBACKS: list[Callable[[], None]] = []


def when_entries_dropped(callback: Callable[[], None]) -> None:
    """Call `callback()` after any cache of this process dropped entries (once registered,
    however often registered)."""
    if callback not in _DROP_CALLBACKS:
        _DROP_CALLBACKS.append(callback)


T = TypeVar("T")

CACHE_MB_VARIABLE = "STATLAS_CACHE_MB"
DEFAULT_CACHE_MB = 256
# a value of an object array: its pointer and a short boxed string (~64 bytes)
OBJECT_BYTES = 72
SKETCH_BYTES = 48 * 1024  # a merged sketch whose size the library does not tell


def cache_bytes_from_environment() -> int:
    """STATLAS_CACHE_MB in bytes (default 256 MB; 0 turns the cache off), less what this
    process keeps of it for its other growth (`reserve_for_process`)."""
    text = os.environ.get(CACHE_MB_VARIABLE, str(DEFAULT_CACHE_MB))
    try:
        megabytes = float(text)
    except ValueError:
        raise InvalidValue(
            f"{CACHE_MB_VARIABLE} must be a number of megabytes, got {text!r}"
        ) from None
    bound = max(0, int(megabytes * 1024 * 1024))
    return bound - min(_reserved_bytes, bound // 2)


_reserved_bytes = 0


def reserve_for_process(reserved: int) -> None:
    """In a process whose whole growth STATLAS_CACHE_MB bounds (the daemon), keep `reserved`
    bytes of the bound (at most half of it) for what grows beside the caches made from now
    on: the database drivers' and SQLAlchemy's statement caches, the allocators' free
    pages, per-thread heaps."""
    global _reserved_bytes
    _reserved_bytes = max(0, reserved)


class StatisticsCache:
    """Least-recently-used entries under a byte bound; safe to share between threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        # per entry: its stamp, value, size and a token of this very entry (for growth reports)
        self._entries: OrderedDict[Hashable, tuple[TableStamp, Any, int, object]] = OrderedDict()
        self._stamps: dict[str, TableStamp] = {}  # the newest stamp seen of each table
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def size(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get_or_compute(
        self, table: str, stamp: TableStamp, key: Hashable, compute: Callable[[], T]
    ) -> T:
        """The entry of `key` for `table` under `stamp`, computed (outside the lock) and
        kept when it is missing or older."""
        full_key = (table, key)
        with self._lock:
            self._forget_older(table, stamp)
            found = self._entries.get(full_key)
            if found is not None and found[0] == stamp:
                self._entries.move_to_end(full_key)
                self.hits += 1
                return found[1]  # type: ignore[no-any-return]
            self.misses += 1
        value = compute()
        size = approximate_size(value)
        dropped = 0
        with self._lock:
            if self._stamps.get(table) == stamp and size <= self.max_bytes:
                previous = self._entries.pop(full_key, None)
                if previous is not None:
                    self._bytes -= previous[2]
                token = object()
                self._entries[full_key] = (stamp, value, size, token)
                self._bytes += size
                dropped = self._shrink()
                stored = full_key in self._entries
            else:
                stored = False
        self._released(dropped)
        watch = getattr(value, "watch", None)
        if stored and callable(watch):
            # the report holds the entry's token, not the value: no cycle keeps a dropped
            # value alive until the garbage collector's next full pass
            watch(partial(self._grown, full_key, token))
        return value

    def _grown(self, full_key: Hashable, token: object, grown: int) -> None:
        """An entry's value holds `grown` bytes more than it did (counted while it is the
        entry's value; an entry dropped or replaced meanwhile is not counted again)."""
        with self._lock:
            entry = self._entries.get(full_key)
            if entry is None or entry[3] is not token:
                return
            self._entries[full_key] = (entry[0], entry[1], entry[2] + grown, token)
            self._bytes += grown
            dropped = self._shrink()
        self._released(dropped)

    def _shrink(self) -> int:
        """Drop the least recently used entries until the bound holds (lock held); the
        bytes dropped."""
        dropped = 0
        while self._bytes > self.max_bytes and self._entries:
            _, (_, _, size, _) = self._entries.popitem(last=False)
            self._bytes -= size
            dropped += size
        return dropped

    def _released(self, dropped: int) -> None:
        """After entries were dropped (lock released): the callbacks `when_entries_dropped`
        registered run (the daemon hands the freed pages back to the system)."""
        if dropped:
            for callback in _DROP_CALLBACKS:
                callback()

    def _forget_older(self, table: str, stamp: TableStamp) -> None:
        """A newer stamp of `table` drops its entries of older ones (lock held); a reader
        holding an older stamp than one seen computes without caching."""
        if not stamp.newer_than(self._stamps.get(table)):
            return
        self._stamps[table] = stamp
        stale = [key for key, entry in self._entries.items() if _table_of(key) == table]
        for key in stale:
            self._bytes -= self._entries.pop(key)[2]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._stamps.clear()
            self._bytes = 0


def _table_of(key: Hashable) -> Any:
    return key[0] if isinstance(key, tuple) else None


_CACHES: weakref.WeakKeyDictionary[Engine, StatisticsCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_for(engine: Engine) -> StatisticsCache:
    """The cache of one metastore database, shared by everything in this process that
    reads it through `engine`."""
    with _CACHES_LOCK:
        cache = _CACHES.get(engine)
        if cache is None:
            cache = _CACHES[engine] = StatisticsCache(cache_bytes_from_environment())
        return cache


def approximate_size(value: Any) -> int:
    """Bytes a cached value holds, measured to bound what it costs the process: arrays by
    their buffers (object arrays by their boxes), sketches by their native memory
    (`sketch_bytes`), Python objects by their allocations (`_python_bytes`), a value that
    measures itself (`cache_bytes()`, a sample) by its own measure. An object reached twice
    is counted once. Measured against glibc's and pymalloc's live bytes of real entries
    (tests/metastore/test_cache_accounting.py): within ACCOUNTING_FACTOR of their cost."""
    return _size(value, set(), 0)


ACCOUNTING_FACTOR = 1.5  # approximate_size / measured cost of an entry, at most (and >= 1)
ALLOCATION_GRAIN = 16  # pymalloc and glibc round every allocation up to 16 bytes
SMALL_OBJECT_BYTES = 512  # pymalloc's largest block; larger objects are glibc's chunks
MALLOC_HEADER_BYTES = 16
# an instance without __slots__ (Python 3.11+): its object, one 8-byte value per field and
# the values array's header (a frozen dataclass of 2 fields: 88 bytes, of 18: 232)
INSTANCE_VALUES_BYTES = 32
MAX_DEPTH = 16


def _rounded(size: int) -> int:
    """An object's allocation: pymalloc's block, or past SMALL_OBJECT_BYTES glibc's chunk
    and its header."""
    if size > SMALL_OBJECT_BYTES:
        size += MALLOC_HEADER_BYTES
    return -(-size // ALLOCATION_GRAIN) * ALLOCATION_GRAIN


def _size(value: Any, seen: set[int], depth: int) -> int:
    if value is None or isinstance(value, bool):
        return 0  # singletons: only the container's pointer, counted with the container
    if isinstance(value, int | float):
        return _rounded(sys.getsizeof(value))
    if isinstance(value, str | bytes):
        return _rounded(sys.getsizeof(value))
    if id(value) in seen or depth > MAX_DEPTH:
        return 0
    seen.add(id(value))
    measure = getattr(value, "cache_bytes", None)
    if callable(measure) and not isinstance(value, type):
        return int(measure())
    if isinstance(value, np.ndarray):
        boxes = value.size * OBJECT_BYTES if value.dtype == object else 0
        return int(value.nbytes) + boxes + 112
    if isinstance(value, pa.Array | pa.ChunkedArray | pa.Table):
        return int(value.nbytes) + 112
    if isinstance(value, dict):
        return _rounded(sys.getsizeof(value)) + sum(
            _size(k, seen, depth + 1) + _size(v, seen, depth + 1) for k, v in value.items()
        )
    if isinstance(value, list | tuple | set | frozenset):
        return _rounded(sys.getsizeof(value)) + sum(_size(item, seen, depth + 1) for item in value)
    sketch = sketch_bytes(value)
    if sketch is not None:
        return sketch
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        own = _rounded(sys.getsizeof(value))
        if not hasattr(value, "__slots__"):
            own += 8 * len(fields) + INSTANCE_VALUES_BYTES
        return own + sum(_size(getattr(value, name), seen, depth + 1) for name in fields)
    return _rounded(sys.getsizeof(value))


# Native memory of DataSketches' objects (C++ behind nanobind), measured as glibc's live
# bytes per merged sketch (lgK 12 Theta, k 200 KLL, lgK 12 HLL) against their sizes:
# Theta: 8 bytes per retained hash and ~190 bytes of object; KLL: 8 bytes per retained
# item, up to ~1,300 bytes of unused level capacity and object, and the sorted view its
# first quantile query builds and keeps (an item and a cumulative weight, 16 bytes, per
# retained item: a cached KLL has been queried, its histograms are drawn from it; TPC-H
# lineitem's columns ~5 KB each before, ~14 KB after); HLL: its compact serialisation and
# up to ~800 bytes (a list- or set-mode sketch's hash table). The library tells none of
# them but the retained counts and serialised sizes.
THETA_OBJECT_BYTES = 256
KLL_ITEM_BYTES = 8 + 16
KLL_OBJECT_BYTES = 1536
HLL_OBJECT_BYTES = 1024


def sketch_bytes(value: Any) -> int | None:
    """A DataSketches object's memory (None: not one): from its retained items where the
    library tells them, else from its serialised size."""
    module = type(value).__module__ or ""
    if not module.startswith(("datasketches", "_datasketches")):
        return None
    kind = type(value).__name__
    retained = getattr(value, "num_retained", None)
    if kind.startswith("kll_") and isinstance(retained, int):
        return KLL_ITEM_BYTES * retained + KLL_OBJECT_BYTES
    if "theta" in kind and isinstance(retained, int):
        return 8 * retained + THETA_OBJECT_BYTES
    if kind == "hll_sketch":
        return int(value.get_compact_serialization_bytes()) + HLL_OBJECT_BYTES
    measure = getattr(value, "get_serialized_size_bytes", None)
    if measure is not None:
        try:
            return int(measure()) * 2
        except TypeError:
            pass
    return SKETCH_BYTES

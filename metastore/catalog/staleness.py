"""Whether a partition's statistics are current: taken at the fingerprint (file count,
bytes, newest modification time) the partition has now."""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_


def stale_condition(partitions: Any, stats: Any) -> Any:
    """A partition (row of `partitions` outer-joined with partition_stats `stats`) without
    statistics, or whose fingerprint differs from the one they were taken at."""
    return or_(
        stats.partition_id.is_(None),
        stats.file_count != partitions.file_count,
        stats.total_bytes != partitions.total_bytes,
        stats.modified_ns != partitions.modified_ns,
    )

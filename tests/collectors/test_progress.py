"""A collection's progress (collectors/progress.py): the tasks of its Spark job group, each
finished job counted once and not asked again."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.progress import _tasks_of_group, watch_spark_job

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


class Recorded:
    def __init__(self) -> None:
        self.updates: list[tuple[str, int, int]] = []

    def update(self, phase: str, done: int, total: int) -> None:
        self.updates.append((phase, done, total))


def test_a_groups_tasks_are_counted_and_finished_jobs_kept(spark: Any) -> None:
    context = spark.sparkContext
    sink = Recorded()
    with watch_spark_job(spark, "progress-test", sink, every=0.05):
        for parts in (3, 4):
            assert context.parallelize(range(40), parts).map(lambda x: x + 1).count() == 40
    ended: dict[int, tuple[int, int]] = {}
    assert _tasks_of_group(context, "progress-test", ended) == (7, 7)
    assert sorted(ended.values()) == [(3, 3), (4, 4)]
    # a finished job's counts are the ones kept, not asked of Spark again
    first = min(ended)
    ended[first] = (30, 30)
    assert _tasks_of_group(context, "progress-test", ended) == (34, 34)
    assert _tasks_of_group(context, "progress-test") == (7, 7)
    assert all(phase == "scan" and done <= total for phase, done, total in sink.updates)

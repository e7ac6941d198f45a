"""Two writers at once never interleave: each registration is applied whole, or refused."""

from __future__ import annotations

import threading
from pathlib import Path

from metastore import Metastore
from metastore.errors import ConcurrentModification
from tests.support.partitions import write_partitions


def test_concurrent_registrations_of_one_table(db_url: str, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["n"], [[str(i)] for i in range(200)])
    Metastore(db_url).upgrade()
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def register() -> None:
        ms = Metastore(db_url)
        barrier.wait()
        try:
            report = ms.register_table("t", str(root))
            outcomes.append("created" if report.created else "refreshed")
        except ConcurrentModification:
            outcomes.append("refused")
        finally:
            ms.dispose()

    threads = [threading.Thread(target=register) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) in (["created", "refreshed"], ["created", "refused"])
    ms = Metastore(db_url)
    [table] = ms.tables()
    assert table.partition_count == 200
    assert len(ms.partitions("t", {"n": list(range(200))})) == 200
    ms.dispose()

"""A process that hands freed memory back (the daemon, servers.process_memory) releases it
at most once a RELEASE_INTERVAL_S, and never drops a release: memory freed within the
interval of the last release is handed back at the interval's end. In a fresh interpreter
(tune_allocator changes the process's allocator)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from servers.process_memory import RELEASE_INTERVAL_S

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, time
import servers.process_memory as memory

memory.tune_allocator()
released = []
real = memory.release_freed_memory

def recorded():
    released.append(time.monotonic())
    real()

memory.release_freed_memory = recorded
start = time.monotonic()
memory.memory_freed()  # released at once
time.sleep(0.05)
memory.memory_freed()  # within the interval: released at its end
memory.memory_freed()  # already due: the same release
time.sleep(3 * memory.RELEASE_INTERVAL_S)
print(json.dumps([t - start for t in released]))
"""


def test_memory_freed_in_a_burst_is_released_at_the_intervals_end() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    released = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(released) == 2
    assert released[0] < RELEASE_INTERVAL_S / 2
    assert released[1] - released[0] >= RELEASE_INTERVAL_S * 0.99

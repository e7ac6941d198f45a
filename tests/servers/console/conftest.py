"""The console's fixtures: Debian's chromium driven by Playwright, and a `statlas daemon`
process serving the console over a metastore (SQLite and PostgreSQL) whose statistics
Spark collected."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metastore import Metastore
from tests.support.databases import BACKENDS, postgres_schema
from tests.support.partitions import corrupt_pages, write_partition
from tests.support.processes import free_port, log_tail, statlas_env, stop_group

STATLAS = Path(sys.executable).parent / "statlas"
DAYS = ("2024-01-01", "2024-01-02", "2024-01-03")
REGIONS = ("apac", "emea")
ROWS = 120  # per partition of `events`
START_TIMEOUT = 30.0


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's chromium (`make tools` installs it), headless, driven by Playwright: no
    browser is downloaded."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: `make tools` installs Debian's chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        yield browser
        browser.close()


@dataclass(frozen=True)
class Console:
    url: str  # the daemon serving the console and the API
    db_url: str
    lake: Path
    token: str | None = None

    def api(self, path: str, body: Any = None) -> Any:
        """The daemon's JSON answer to GET `path` (POST with `body`), as the page asks it."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data=data, headers=headers)
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read())


@contextlib.contextmanager
def daemon(db_url: str, cwd: Path, token: str | None = None) -> Iterator[str]:
    """`statlas daemon` on a free port (no Hive Metastore API), its URL once it answers."""
    port = free_port()
    log = cwd / f"daemon-{port}.log"
    settings = {"STATLAS_API_TOKEN": token} if token else {}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(STATLAS), "daemon", "--port", str(port), "--thrift-port", "0"],
            cwd=cwd,
            env=statlas_env(db_url, **settings),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers(url + "/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the daemon did not start\n{log_tail(log)}")
            time.sleep(0.2)
        yield url
    finally:
        stop_group(process)


def _answers(url: str) -> bool:
    with (
        contextlib.suppress(OSError, urllib.error.URLError),
        urllib.request.urlopen(url, timeout=2) as answer,
    ):
        return bool(answer.status == 200)
    return False


@contextlib.contextmanager
def backend_url(backend: str, directory: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{directory / 'statlas.db'}"
    else:
        with postgres_schema() as url:
            yield url


@pytest.fixture(scope="module", params=BACKENDS)
def console(
    request: pytest.FixtureRequest, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Console]:
    """`events` (dt x region, 6 partitions of ROWS rows) and `notes` (not partitioned),
    collected by Spark; then one partition of `events` rewritten unreadable, so its table's
    second collection fails and the partition is stale; a schedule; the daemon serving it."""
    from collectors.collect import CollectionFailed, collect

    directory = tmp_path_factory.mktemp(f"console-{request.param}")
    with backend_url(request.param, directory) as db_url:
        metastore = Metastore(db_url)
        metastore.upgrade()
        rng = random.Random(7)
        lake = directory / "events"
        for day in DAYS:
            for region in REGIONS:
                write_partition(lake, [day, region], rng, ROWS)
        metastore.register_table("events", str(lake))
        notes = directory / "notes"
        notes.mkdir()
        shutil.copy(lake / "dt=2024-01-01" / "region=apac" / "part-00000.parquet", notes)
        metastore.register_table("notes", str(notes))
        collect(metastore.engine, "events", spark=spark)
        collect(metastore.engine, "notes", spark=spark)
        corrupt_pages(lake / "dt=2024-01-03" / "region=emea" / "part-00000.parquet")
        metastore.register_table("events", str(lake))
        with pytest.raises(CollectionFailed):
            collect(metastore.engine, "events", spark=spark)
        metastore.engine.dispose()
        with daemon(db_url, directory) as url:
            here = Console(url, db_url, lake)
            here.api("/schedules", {"table": "notes", "every": "1d"})
            yield here


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh browser page (its own session storage) on a laptop-sized screen; a script
    error on the page, or anything its Content-Security-Policy blocked, fails the test."""
    context = chromium.new_context(viewport={"width": 1366, "height": 860})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            errors.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield page
    context.close()
    assert not errors, errors


def screenshot(page: Any, name: str) -> None:
    """With STATLAS_SCREENSHOTS=DIR, the page as it is now in DIR/<name>.png (docs/console/
    holds the ones taken by these tests)."""
    directory = os.environ.get("STATLAS_SCREENSHOTS")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(directory) / f"{name}.png"), full_page=True)

"""servers.console.routes: the console's files are served at / and /console/ to anyone
(they hold no data), with a policy that lets the page reach this daemon only; the API
behind them keeps wanting the token."""

from __future__ import annotations

from pathlib import Path

from metastore import Metastore
from servers.console.routes import STATIC
from servers.http.app import create_app
from tests.servers.http.helpers import TestClient, assert_error

TOKEN = "s3cret-token"


def test_console_files_are_open_and_the_api_is_not(sales: Metastore, db_url: str) -> None:
    with TestClient(create_app(db_url, token=TOKEN)) as client:
        index = client.get("/")
        assert index.status_code == 200
        assert index.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/console/console.js">' in index.text
        policy = index.headers["content-security-policy"]
        assert "default-src 'self'" in policy
        for path in sorted(STATIC.iterdir()):
            served = client.get(f"/console/{path.name}")
            assert served.status_code == 200, path.name
            assert served.content == path.read_bytes()
        assert (
            client.get("/console/console.js").headers["content-type"].startswith("text/javascript")
        )
        script = client.get("/console/console.js")
        again = client.get("/console/console.js", headers={"If-None-Match": script.headers["etag"]})
        assert (again.status_code, again.content) == (304, b"")
        assert_error(client.get("/console/nothing.js"), 404, "no console file 'nothing.js'")
        assert_error(client.get("/console/..%2F..%2Fpyproject.toml"), 404)
        # the console's address opens no route of the API
        assert_error(client.get("/tables"), 401, "missing or wrong bearer token")
        assert_error(client.get("/console"), 401)


def test_every_script_the_page_loads_is_served() -> None:
    """The modules import one another by relative path: each import names a served file."""
    served = {p.name for p in STATIC.iterdir()}
    for script in Path(STATIC).glob("*.js"):
        for line in script.read_text().splitlines():
            if line.startswith("import "):
                target = line.rsplit("from", 1)[1].strip().strip('";').removeprefix("./")
                assert target in served, (script.name, target)


def test_every_module_is_preloaded_by_the_page() -> None:
    """index.html asks for every module at once (modulepreload), not one import level
    after another: a module added without its line there would cost a round trip."""
    index = (STATIC / "index.html").read_text()
    for script in sorted(STATIC.glob("*.js")):
        if script.name != "console.js":
            assert f'<link rel="modulepreload" href="/console/{script.name}">' in index, script

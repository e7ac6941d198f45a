"""The web console in a real browser (Debian's chromium through Playwright) against a
`statlas daemon` on SQLite and PostgreSQL with statistics Spark collected: each page shows
the figures the HTTP API answers for the same request."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from metastore import Metastore, daemons
from metastore.daemons import DaemonIdentity
from metastore.engine import run_write
from tests.servers.console.conftest import REGIONS, ROWS, Console, daemon, screenshot

# its own group: on the other worker than the "spark" group (which is the suite's longest)
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("console")]

TIMEOUT_MS = 30_000
DASH = "\u2013"  # the page's dash: in ranges (1-4 of 6) and for a figure not known


def number(text: str) -> float | None:
    """A figure as the page writes it (thousands separators) as a number; a dash for one
    not known."""
    text = text.replace(",", "").strip()
    return None if text == DASH else float(text)


def shown(value: Any) -> str:
    """A column's min or max as the page writes it."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return str(value)


def open_page(page: Any, console: Console, address: str) -> None:
    page.goto(f"{console.url}/{address}")
    page.wait_for_selector("main[aria-busy=false]", timeout=TIMEOUT_MS)
    assert_labelled(page)


def assert_labelled(page: Any) -> None:
    """Every form control of the page has a label a screen reader announces."""
    unlabelled = page.locator("input, select, textarea").evaluate_all(
        "controls => controls.filter(c => c.type !== 'hidden' && c.labels.length === 0"
        " && !c.getAttribute('aria-label')).map(c => c.outerHTML)"
    )
    assert unlabelled == []


def settled(page: Any) -> None:
    """Every section of the page has its answer. (Locators, not wait_for_function: the
    page's policy forbids evaluating strings, and Playwright's polling does.)"""
    expect(page.locator("[aria-busy=true]")).to_have_count(0, timeout=TIMEOUT_MS)


def statistics_request(response: Any) -> bool:
    return bool(response.url.endswith("/statistics") and response.request.method == "POST")


DETERMINED = ("null_count", "ndv", "min", "max", "avg_len", "max_len")


def assert_same_figures(received: dict[str, Any], asked: dict[str, Any]) -> None:
    """What the page received and what the test asked of the API for the same selection
    agree on every figure that does not depend on a sketch's random compaction (KLL's
    merges draw coins: the histograms' counts of two identical requests may differ by a
    few rows, within the sketch's error)."""
    assert (received["partitions"], received["row_count"]) == (
        asked["partitions"],
        asked["row_count"],
    )
    for name, column in asked["columns"].items():
        assert {f: received["columns"][name][f] for f in DETERMINED} == {
            f: column[f] for f in DETERMINED
        }, name


def test_tables_page_lists_the_summaries_the_api_gives(page: Any, console: Console) -> None:
    open_page(page, console, "#/tables")
    answer = {t["name"]: t for t in console.api("/tables?summary=true")["tables"]}
    rows = page.locator("table.grid tbody tr")
    assert rows.count() == len(answer) == 2
    for index in range(rows.count()):
        row = rows.nth(index)
        name = row.locator("td[data-column=name]").inner_text()
        summary = answer[name]["summary"]
        cell = {
            key: row.locator(f"td[data-column={key}]").inner_text()
            for key in ("partitions", "rows", "files", "stale_partitions", "database")
        }
        assert number(cell["partitions"]) == answer[name]["partitions"]
        assert number(cell["rows"]) == summary["rows"]
        assert number(cell["files"]) == summary["files"]
        assert number(cell["stale_partitions"]) == summary["stale_partitions"]
        assert cell["database"] == summary["database"]
    # the rewritten partition of events is stale; notes is current
    assert answer["events"]["summary"]["stale_partitions"] == 1
    assert answer["notes"]["summary"]["stale_partitions"] == 0
    screenshot(page, "tables")
    page.get_by_role("button", name="Rows", exact=True).click()  # ascending: notes (ROWS) first
    assert page.locator("tbody tr td[data-column=name]").all_inner_texts() == ["notes", "events"]
    page.get_by_role("button", name="Rows", exact=True).click()
    assert page.locator("tbody tr td[data-column=name]").all_inner_texts() == ["events", "notes"]
    page.get_by_label("Search tables").fill("note")
    assert page.locator("tbody tr td[data-column=name]").all_inner_texts() == ["notes"]

    # from the keyboard alone: the skip link, the search field, a sort button
    page.reload()
    page.wait_for_selector("main[aria-busy=false]", timeout=TIMEOUT_MS)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(6):  # past the brand and the three pages' links
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "table-search":
            break
    assert page.evaluate("document.activeElement.id") == "table-search"
    page.keyboard.type("events")
    assert page.locator("tbody tr td[data-column=name]").all_inner_texts() == ["events"]
    page.get_by_role("button", name="Partitions", exact=True).focus()
    page.keyboard.press("Enter")  # sorts, and the focus stays on the header pressed
    assert page.evaluate("document.activeElement.textContent") == "Partitions ▲"
    assert page.locator("th[aria-sort=ascending]").get_attribute("data-key") == "partitions"


def column_figures(page: Any) -> dict[str, dict[str, str]]:
    figures: dict[str, dict[str, str]] = {}
    rows = page.locator("#columns tbody tr")
    for index in range(rows.count()):
        row = rows.nth(index)
        cells = row.locator("td[data-figure]")
        figures[row.get_attribute("data-column")] = {
            cells.nth(i).get_attribute("data-figure"): cells.nth(i).inner_text()
            for i in range(cells.count())
        }
    return figures


def bucket_counts(page: Any, column: str) -> list[float]:
    cells = page.locator(f"article[data-column={column}] table.buckets td[data-count]")
    return [float(c) for c in cells.evaluate_all("cells => cells.map(c => c.dataset.count)")]


def assert_statistics_shown(page: Any, answer: dict[str, Any], kind: str) -> None:
    assert (
        number(page.locator("#statistics-summary [data-figure=partitions]").inner_text())
        == (answer["partitions"])
    )
    assert (
        number(page.locator("#statistics-summary [data-figure=row_count]").inner_text())
        == (answer["row_count"])
    )
    figures = column_figures(page)
    assert set(figures) == set(answer["columns"])
    for name, column in answer["columns"].items():
        assert number(figures[name]["null_count"]) == column["null_count"], name
        assert number(figures[name]["ndv"]) == column["ndv"], name
        assert figures[name]["min"] == shown(column["min"]), name
        assert figures[name]["max"] == shown(column["max"]), name
        average = column["avg_len"]
        assert number(figures[name]["avg_len"]) == (None if average is None else round(average, 2))
        histogram = column[kind]
        if histogram is not None:
            assert bucket_counts(page, name) == histogram["counts"], name


def test_table_page_shows_merged_statistics_of_the_selection(page: Any, console: Console) -> None:
    with page.expect_response(statistics_request, timeout=TIMEOUT_MS) as whole_answer:
        open_page(page, console, "#/table/events")
    settled(page)
    whole = whole_answer.value.json()
    assert whole_answer.value.request.post_data_json == {"buckets": 16}
    assert whole["partitions"] == 6
    assert_statistics_shown(page, whole, "equi_depth")
    assert_same_figures(whole, console.api("/tables/events/statistics", {"buckets": 16}))
    assert len(bucket_counts(page, "id")) == 16
    screenshot(page, "table")

    # a selection: the figures become the merged statistics of exactly those partitions
    page.get_by_label("dt in (comma-separated)").fill("2024-01-01")
    page.get_by_label("Buckets", exact=True).fill("4")
    page.get_by_label("Histogram", exact=True).select_option("equi_width")
    with page.expect_response(statistics_request, timeout=TIMEOUT_MS) as chosen_answer:
        page.get_by_role("button", name="Apply").click()
    settled(page)
    chosen = chosen_answer.value.json()
    asked = {"in": {"dt": ["2024-01-01"]}, "buckets": 4}
    assert chosen_answer.value.request.post_data_json == asked
    assert (chosen["partitions"], chosen["row_count"]) == (len(REGIONS), len(REGIONS) * ROWS)
    assert_statistics_shown(page, chosen, "equi_width")
    assert_same_figures(chosen, console.api("/tables/events/statistics", asked))
    assert sum(bucket_counts(page, "id")) == len(REGIONS) * ROWS
    assert len(bucket_counts(page, "id")) == 4
    # the partitions list follows the selection
    expect(page.locator("#page-position")).to_have_text(f"1{DASH}2 of 2")

    # a condition on keys (a range) selects too
    page.get_by_label("dt in (comma-separated)").fill("")
    condition = "dt >= '2024-01-02' AND region = 'apac'"
    page.get_by_label("where (condition on keys)").fill(condition)
    with page.expect_response(statistics_request, timeout=TIMEOUT_MS) as ranged_answer:
        page.get_by_role("button", name="Apply").click()
    settled(page)
    ranged = ranged_answer.value.json()
    assert ranged_answer.value.request.post_data_json == {"where": condition, "buckets": 4}
    assert ranged["partitions"] == 2
    assert_statistics_shown(page, ranged, "equi_width")
    assert_same_figures(ranged, console.api("/tables/events/statistics", {"where": condition}))
    expect(page.locator("#page-position")).to_have_text(f"1{DASH}2 of 2")


def test_partitions_are_paged_from_the_server(page: Any, console: Console) -> None:
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/partitions/page" in r.url else None)
    open_page(page, console, "#/table/events?limit=4")
    settled(page)
    assert page.locator("#page-position").inner_text() == f"1{DASH}4 of 6"
    first = console.api("/tables/events/partitions/page?offset=0&limit=4")
    shown_names = page.locator("#partition-list tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.name)"
    )
    assert shown_names == [p["name"] for p in first["partitions"]]
    page.get_by_role("button", name="Next →").click()
    expect(page.locator("#page-position")).to_have_text(f"5{DASH}6 of 6", timeout=TIMEOUT_MS)
    second = console.api("/tables/events/partitions/page?offset=4&limit=4")
    rows = page.locator("#partition-list tbody tr")
    assert rows.count() == len(second["partitions"]) == 2
    for index, partition in enumerate(second["partitions"]):
        row = rows.nth(index)
        assert row.get_attribute("data-name") == partition["name"]
        assert number(row.locator("[data-figure=files]").inner_text()) == partition["files"]
        rows_text = row.locator("[data-figure=rows]").inner_text()
        assert number(rows_text) == partition["rows"]
        assert ("stale" in row.inner_text()) == partition["stale"]
    assert any(p["stale"] for p in second["partitions"])  # the rewritten one: last by keys
    assert any("offset=4" in url for url in requests), requests  # asked of the server


def test_runs_page_shows_a_failed_run_and_its_error(page: Any, console: Console) -> None:
    open_page(page, console, "#/runs")
    runs = console.api("/runs?limit=200")["runs"]
    failed = [r for r in runs if r["status"] == "failed"]
    assert len(failed) == 1
    assert failed[0]["error"]
    rows = page.locator("#runs tbody tr")
    assert rows.count() == len(runs)
    failed_row = page.locator("#runs tbody tr.failed")
    assert failed_row.locator("td[data-column=error]").inner_text() == failed[0]["error"]
    assert number(failed_row.locator("td[data-column=id]").inner_text()) == failed[0]["id"]
    succeeded = page.locator("#runs tbody tr.succeeded td[data-column=rows]").all_inner_texts()
    assert sorted(number(t) for t in succeeded) == sorted(
        r["rows"] for r in runs if r["status"] == "succeeded"
    )
    [schedule] = console.api("/schedules")
    assert page.locator("#schedules tbody tr").inner_text().split("\t")[0] == schedule["table"]
    assert (
        schedule["next_run"].replace("T", " ").replace("Z", " UTC")
        in page.locator("#schedules").inner_text()
    )
    scheduler = console.api("/scheduler")
    assert scheduler["node"] in page.locator("#scheduler").inner_text()
    assert ("leader" in page.locator("#scheduler [data-figure=leader]").inner_text()) == (
        scheduler["leader"]
    )
    assert_daemons_shown(page, console, scheduler["node"])
    screenshot(page, "runs")


def assert_daemons_shown(page: Any, console: Console, this_one: str) -> None:
    """The daemons table lists what GET /daemons gives: the daemon serving the page leads;
    a daemon that stopped beating an hour ago is silent, and does not."""
    crashed = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    gone = DaemonIdentity(
        "lost-host:4242",
        "lost-host",
        4242,
        "http://lost-host:8080",
        None,
        "0.9.0",
        crashed - dt.timedelta(days=1),
    )
    engine = Metastore(console.db_url).ready()
    run_write(engine, lambda conn: daemons.beat(conn, gone, crashed, now=crashed))
    engine.dispose()
    page.reload()
    page.wait_for_selector("main[aria-busy=false]", timeout=TIMEOUT_MS)
    listed = console.api("/daemons")
    assert listed["leader"] == this_one
    rows = page.locator("#daemons tbody tr")
    assert rows.count() == len(listed["daemons"])
    shown_rows = {
        row.locator("td[data-column=node]").inner_text().removesuffix(" (this one)"): row
        for row in rows.all()
    }
    for figures in listed["daemons"]:
        row = shown_rows[figures["node"]]
        assert row.locator("td[data-column=state]").inner_text() == figures["state"]
        role = row.locator("td[data-column=leader]").inner_text()
        assert (role == "leader") == figures["leader"]
        assert row.locator("td[data-column=url]").inner_text() == figures["url"]
    assert rows.first.locator("td[data-column=node]").inner_text() == f"{this_one} (this one)"
    lost = shown_rows["lost-host:4242"]
    assert (lost.get_attribute("class"), lost.locator("td[data-column=leader]").inner_text()) == (
        "silent",
        "",
    )


JOIN = (
    "SELECT e.region, COUNT(*) FROM events e JOIN notes n ON e.id = n.id "
    "WHERE e.dt = '2024-01-02' GROUP BY e.region"
)


def plan_nodes(page: Any, side: str) -> list[dict[str, str]]:
    return page.locator(f"section.plan[data-side={side}] .node").evaluate_all(
        """nodes => nodes.map(n => ({
            op: n.dataset.op,
            rows: n.querySelector('[data-figure=rows]').textContent,
            source: n.querySelector('[data-figure=source]')?.textContent ?? null,
            precision: n.querySelector('[data-figure=precision]')?.textContent ?? null,
            algorithm: n.querySelector('.algorithm')?.textContent.trim() ?? null}))"""
    )


def flattened(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node] + [n for child in node["children"] for n in flattened(child)]


def test_plans_page_shows_two_levels_side_by_side(page: Any, console: Console) -> None:
    open_page(page, console, "#/plans")
    page.get_by_label("Query", exact=True).fill(JOIN)
    page.get_by_label("Compare with a second query or level").check()
    page.locator("#level-b").select_option("basic")
    page.get_by_role("button", name="Plan").click()
    page.wait_for_selector("section.plan[data-side=b] .node", timeout=TIMEOUT_MS)
    settled(page)
    for side, level in (("a", "sketch"), ("b", "basic")):
        answer = console.api("/explain", {"sql": JOIN, "level": level, "emit": "spark"})
        expected = flattened(answer["plan"])
        nodes = plan_nodes(page, side)
        assert [n["op"] for n in nodes] == [n["op"] for n in expected]
        for got, want in zip(nodes, expected, strict=True):
            assert number(got["rows"]) == pytest.approx(want["rows"], rel=0.01, abs=0.06)
            assert (got["source"], got["precision"]) == (want["source"], want["precision"])
            assert got["algorithm"] == want.get("algorithm")
        plan = page.locator(f"section.plan[data-side={side}]")
        assert plan.locator("[data-figure=level]").inner_text() == level
        assert plan.locator("pre.sql").inner_text() == answer["spark_sql"]
    assert any(n["algorithm"] for n in plan_nodes(page, "a"))  # the join's algorithm is shown
    screenshot(page, "plans")
    bad = "SELECT FROM WHERE"
    page.get_by_label("Query", exact=True).fill(bad)
    page.get_by_role("button", name="Plan").click()
    alert = page.locator("section.plan[data-side=a] [role=alert]")
    alert.wait_for(timeout=TIMEOUT_MS)
    assert alert.inner_text().strip()


def test_token_protected_daemon_refuses_the_page_without_the_token(
    page: Any, console: Console, tmp_path: Any
) -> None:
    token = "console-s3cret"
    with daemon(console.db_url, tmp_path, token=token) as url:
        answers: list[tuple[str, int, str | None]] = []
        page.on(
            "response",
            lambda r: answers.append((r.url, r.status, r.request.headers.get("authorization"))),
        )
        page.goto(f"{url}/#/tables")
        dialog = page.locator("#token-dialog")
        dialog.wait_for(state="visible", timeout=TIMEOUT_MS)
        refused = [(u, s) for u, s, _ in answers if urlparse(u).path == "/tables"]
        assert refused
        assert all(s == 401 for _, s in refused)
        # the page's own requests without the token: refused
        status = page.evaluate("fetch('/tables').then(r => r.status)")
        assert status == 401
        page.get_by_role("button", name="Cancel").click()
        page.wait_for_selector("main[aria-busy=false]", timeout=TIMEOUT_MS)
        assert "missing or wrong bearer token" in page.locator("[role=alert]").inner_text()
        # a wrong token is refused and asked for again, the right one opens the API
        page.reload()
        dialog.wait_for(state="visible", timeout=TIMEOUT_MS)
        page.get_by_label("Token", exact=True).fill("wrong")
        page.get_by_role("button", name="Send").click()
        expect(page.locator("#token-why")).to_contain_text("refused", timeout=TIMEOUT_MS)
        page.get_by_label("Token", exact=True).fill(token)
        page.get_by_role("button", name="Send").click()
        page.wait_for_selector("main[aria-busy=false] table.grid", timeout=TIMEOUT_MS)
        assert page.locator("tbody tr").count() == 2
        granted = [(u, s, a) for u, s, a in answers if urlparse(u).path == "/tables" and s == 200]
        assert granted
        assert all(a == f"Bearer {token}" for _, _, a in granted)

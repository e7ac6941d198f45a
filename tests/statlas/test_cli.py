"""The CLI: JSON shapes, one-line errors with exit code 2, value files and stdin."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statlas.cli import main
from tests.support.partitions import write_partitions


@pytest.fixture
def registered(db_url: str, tmp_path: Path) -> str:
    rows: list[list[str | None]] = [
        [d, r] for d in ("2024-01-01", "2024-01-02") for r in ("emea", "apac")
    ]
    rows.append([None, "emea"])
    write_partitions(tmp_path / "sales", ["dt", "region"], rows)
    assert main(["--db", db_url, "db", "upgrade"]) == 0
    assert (
        main(["table", "register", "sales", "--path", str(tmp_path / "sales"), "--db", db_url]) == 0
    )
    return db_url


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_partitions_json(
    registered: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run_json(
        capsys,
        "partitions",
        "sales",
        "--db",
        registered,
        "--in",
        "dt=2024-01-01,__HIVE_DEFAULT_PARTITION__",
        "--in",
        "region=emea",
        "--json",
    )
    assert result == {
        "table": "sales",
        "count": 2,
        "partitions": [
            {
                "values": {"dt": "2024-01-01", "region": "emea"},
                "location": str(tmp_path / "sales" / "dt=2024-01-01" / "region=emea"),
            },
            {
                "values": {"dt": None, "region": "emea"},
                "location": str(
                    tmp_path / "sales" / "dt=__HIVE_DEFAULT_PARTITION__" / "region=emea"
                ),
            },
        ],
    }


def test_value_and_tuple_files(
    registered: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = tmp_path / "dates.txt"
    values.write_text("2024-01-02\n\n2030-01-01\n")
    tuples = tmp_path / "pairs.jsonl"
    tuples.write_text('["2024-01-01", "apac"]\n[null, "emea"]\n')
    one = run_json(
        capsys, "partitions", "sales", "--db", registered, "--in-file", f"dt={values}", "--json"
    )
    assert isinstance(one, dict)
    assert one["count"] == 2
    two = run_json(
        capsys,
        "partitions",
        "sales",
        "--db",
        registered,
        "--tuples",
        f"dt,region={tuples}",
        "--json",
    )
    assert isinstance(two, dict)
    assert [p["values"] for p in two["partitions"]] == [
        {"dt": "2024-01-01", "region": "apac"},
        {"dt": None, "region": "emea"},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("emea\n"))
    three = run_json(
        capsys,
        "partitions",
        "sales",
        "--db",
        registered,
        "--in-file",
        "region=-",
        "--where",
        "dt >= '2024-01-02'",
        "--json",
    )
    assert isinstance(three, dict)
    assert three["count"] == 1


def test_text_output_and_table_commands(
    registered: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["partitions", "sales", "--db", registered, "--where", "region = 'apac'"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "dt=2024-01-01/region=apac",
        "dt=2024-01-02/region=apac",
    ]
    shown = run_json(capsys, "table", "show", "sales", "--db", registered, "--json")
    assert isinstance(shown, dict)
    assert shown["partitions"] == 5
    assert shown["partition_keys"] == [
        {"name": "dt", "type": "date"},
        {"name": "region", "type": "string"},
    ]
    listed = run_json(capsys, "table", "list", "--db", registered, "--json")
    assert isinstance(listed, list)
    assert [t["name"] for t in listed] == ["sales"]
    assert main(["table", "show", "sales", "--db", registered]) == 0
    assert "region  string" in capsys.readouterr().out
    assert main(["table", "drop", "sales", "--db", registered]) == 0
    assert "dropped sales (5 partitions)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["partitions", "ghost"], "unknown table 'ghost'"),
        (["partitions", "sales", "--in", "dt=2024-1-5"], "'2024-1-5' is not a valid date"),
        (["partitions", "sales", "--in", "zone=1"], "unknown partition key 'zone'"),
        (["partitions", "sales", "--in", "dt="], "empty value list for key dt"),
        (["partitions", "sales", "--in", "dt"], "--in wants KEY=VALUE"),
        (["partitions", "sales", "--where", "dt >"], "cannot parse --where"),
        (["partitions", "sales", "--in-file", "dt=/nonexistent"], "cannot read /nonexistent"),
        (["table", "register", "t", "--path", "/nonexistent"], "is not a directory"),
        (
            ["table", "register", "t", "--path", "/tmp", "--partition-types", "x:float"],
            "unknown partition key type",
        ),
        (["table", "drop", "ghost"], "unknown table 'ghost'"),
    ],
)
def test_errors_are_one_line_exit_2(
    registered: str, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    capsys.readouterr()
    assert main([*argv, "--db", registered]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("statlas: error: ")
    assert message in err


def test_bad_tuple_file(
    registered: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('["2024-01-01", "emea"]\n{"dt": 1}\n')
    assert main(["partitions", "sales", "--db", registered, "--tuples", f"dt,region={bad}"]) == 2
    assert f"{bad}:2: expected a JSON array" in capsys.readouterr().err


def test_console_script_end_to_end(tmp_path: Path) -> None:
    """The installed `statlas` command, in a fresh directory with the embedded default."""
    write_partitions(tmp_path / "d", ["n"], [["1"], ["2"]])
    env = {k: v for k, v in os.environ.items() if k != "STATLAS_DB_URL"}
    statlas = Path(sys.executable).parent / "statlas"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(statlas), *argv],
            cwd=tmp_path,
            env=env,
            text=True,
            capture_output=True,
            timeout=120,
        )

    assert run("table", "register", "d", "--path", "d").returncode == 0
    assert (tmp_path / "statlas.db").exists()
    found = run("partitions", "d", "--in", "n=01", "--json")
    assert json.loads(found.stdout)["partitions"][0]["values"] == {"n": 1}
    bad = run("partitions", "d", "--in", "n=x")
    assert bad.returncode == 2
    assert bad.stderr == ("statlas: error: 'x' is not a valid int for key n\n")
    from metastore.models import SCHEMA_REVISION

    assert run("db", "current").stdout.strip() == SCHEMA_REVISION


def test_unreachable_postgres_is_one_line_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    url = "postgresql+psycopg2://nobody@127.0.0.1:1/none"
    assert main(["table", "list", "--db", url]) == 3
    err = capsys.readouterr().err
    assert err.startswith("statlas: error: cannot reach the metastore at")
    assert err.count("\n") == 1


def test_estimate_json_and_errors(registered: str, capsys: pytest.CaptureFixture[str]) -> None:
    sql = "SELECT s.region, COUNT(*) FROM sales s WHERE s.dt = '2024-01-01' GROUP BY s.region"
    result = run_json(capsys, "estimate", "--db", registered, "--sql", sql, "--json")
    assert isinstance(result, dict)
    assert result["level"] == "sketch"
    plan = result["plan"]
    assert plan["op"] == "aggregate"
    assert plan["children"][0]["op"] == "scan"
    scan = plan["children"][0]
    assert scan["source"] == "no statistics (run statlas collect)"
    assert scan["precision"] == "default"
    assert "s.dt" in scan["columns"]
    assert main(["estimate", "--db", registered, "--sql", sql, "--level", "basic"]) == 0
    assert "scan sales AS s partitions: s.dt = '2024-01-01'" in capsys.readouterr().out
    for bad, message in [
        ("SELECT * FROM nope", "unknown table 'nope'"),
        ("SELECT s.nope FROM sales s", "unknown column"),
        ("SELECT * FROM sales WHERE", "malformed SQL"),
        ("DELETE FROM sales", "only queries"),
    ]:
        assert main(["estimate", "--db", registered, "--sql", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("statlas: error: ")
        assert message in err
        assert err.count("\n") == 1


def test_a_collections_line_names_the_values_its_sample_kept_whatever_the_draw() -> None:
    from collectors.collect import CollectionReport
    from collectors.forced_keys import ForcedKeys
    from statlas.cli import _collected_line

    report = CollectionReport("shop.returns", partitions_scanned=12, rows=24_009, bytes=90_000)
    assert "heavy elsewhere" not in _collected_line(report)
    report.forced = (ForcedKeys("item_id", (101, 2222, 5005)), ForcedKeys("store", (7,)))
    line = _collected_line(report)
    assert line.startswith("shop.returns: scanned 12 partitions (24,009 rows, 90,000 bytes)")
    assert line.endswith("; its sample kept the rows of 4 values heavy elsewhere (item_id, store)")

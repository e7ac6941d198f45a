"""Spark's own Hive client (Hive 2.3 in PySpark 4) logging in to a real MIT KDC from a
keytab (`spark.kerberos.keytab`, `hadoop.security.authentication=kerberos`) and using a
`statlas daemon --thrift-auth kerberos` as its metastore (`hive.metastore.sasl.enabled`):
DDL, INSERT, pruned SELECTs and DROP over SASL GSSAPI; and the same Spark without a keytab
is refused before any call runs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.hive_clients import spark_env
from tests.support.hms_daemon import hms_daemon
from tests.support.kdc import Realm, daemon_arguments, kdc

pytestmark = [pytest.mark.spark, pytest.mark.kerberos, pytest.mark.xdist_group("spark")]

SERVICE = "statlas/localhost"
ROLES = '[principals]\n"spark" = "admin"\n"reader" = "reader"\n'

SPARK_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession

    conf, warehouse = json.loads(sys.argv[1]), sys.argv[2]
    builder = SparkSession.builder.master("local[1]").enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    q = lambda sql: [list(r) for r in spark.sql(sql).collect()]
    out = {}
    try:
        spark.sql("CREATE DATABASE shop")
        spark.sql(
            "CREATE TABLE shop.sales (id BIGINT, v STRING) PARTITIONED BY (day STRING) "
            "STORED AS PARQUET"
        )
        spark.sql(
            "INSERT INTO shop.sales PARTITION (day) "
            "SELECT id, 'v', CAST(id % 3 AS STRING) FROM range(9)"
        )
        out["partitions"] = q("SHOW PARTITIONS shop.sales")
        out["pruned"] = q("SELECT count(*) FROM shop.sales WHERE day = '1'")
        out["plan"] = q("EXPLAIN SELECT count(*) FROM shop.sales WHERE day = '1'")[0][0]
        spark.sql("DROP TABLE shop.sales")
        out["tables"] = q("SHOW TABLES IN shop")
    except Exception as error:
        out["error"] = str(error)[:3000]
    spark.stop()
    print("RESULT " + json.dumps(out))
    """
)


def spark_conf(realm: Realm, port: int, conf_dir: Path, who: str | None) -> dict[str, str]:
    conf = {
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": f"-Djava.security.krb5.conf={realm.krb5_conf}",
        "spark.driver.extraClassPath": str(conf_dir),  # core-site.xml: kerberos
        "spark.hadoop.hadoop.security.authentication": "kerberos",
        "spark.hadoop.hive.metastore.uris": f"thrift://localhost:{port}",
        "spark.hadoop.hive.metastore.sasl.enabled": "true",
        "spark.hadoop.hive.metastore.kerberos.principal": f"{SERVICE}@{realm.realm}",
        "spark.security.credentials.hive.enabled": "false",
        "spark.security.credentials.hadoopfs.enabled": "false",
        "spark.sql.warehouse.dir": str(conf_dir.parent / "warehouse"),
    }
    if who is not None:
        conf["spark.kerberos.principal"] = f"{who}@{realm.realm}"
        conf["spark.kerberos.keytab"] = str(realm.keytab(who))
    return conf


def run_spark(conf: dict[str, str], cwd: Path, realm: Realm) -> dict[str, object]:
    env = spark_env()
    env["KRB5_CONFIG"] = str(realm.krb5_conf)
    env.pop("KRB5CCNAME", None)
    env["KRB5CCNAME"] = f"FILE:{cwd / 'no-tickets'}"  # nothing but the keytab to log in with
    done = subprocess.run(
        [sys.executable, "-c", SPARK_SCRIPT, json.dumps(conf), str(cwd / "warehouse")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert results, done.stderr[-4000:]
    return dict(json.loads(results[-1][len("RESULT ") :]))


def test_spark_logs_in_from_a_keytab_and_uses_the_kerberized_metastore(
    pg_url: str, tmp_path: Path
) -> None:
    with kdc(tmp_path / "kdc") as realm:
        for name in (SERVICE, "spark", "reader"):
            realm.add_principal(name)
        conf_dir = tmp_path / "conf"
        conf_dir.mkdir()
        (conf_dir / "core-site.xml").write_text(
            "<configuration><property><name>hadoop.security.authentication</name>"
            "<value>kerberos</value></property></configuration>\n"
        )
        roles = tmp_path / "roles.toml"
        roles.write_text(ROLES)
        service = f"{SERVICE}@{realm.realm}"
        arguments = [*daemon_arguments(service, realm.keytab(SERVICE)), "--roles", str(roles)]
        extra = {"KRB5_CONFIG": str(realm.krb5_conf)}
        with hms_daemon(pg_url, tmp_path / "daemon", *arguments, env_extra=extra) as (port, log):
            out = run_spark(spark_conf(realm, port, conf_dir, "spark"), tmp_path, realm)
            assert "error" not in out, (out, log.read_text()[-3000:])
            assert out["partitions"] == [["day=0"], ["day=1"], ["day=2"]]
            assert out["pruned"] == [[3]]
            assert out["tables"] == []

            refused = run_spark(spark_conf(realm, port, conf_dir, None), tmp_path, realm)
            assert "error" in refused, refused
            daemon_log = log.read_text()
            assert "refused: the client gave up its SASL negotiation" in daemon_log, daemon_log[
                -3000:
            ]
            assert "GSS initiate failed" in daemon_log, daemon_log[-3000:]

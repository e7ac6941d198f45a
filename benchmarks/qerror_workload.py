"""The cardinality-estimation workload of issue 4: 80 COUNT(*) queries over TPC-H, as data.

Every query is `SELECT COUNT(*) FROM ... WHERE ...` in plain SQL that runs unchanged on Spark
and PostgreSQL (DATE literals, lower-case unquoted names, numeric literals for decimals).
`joins` is the number of tables minus one. Kinds and counts:

  single      30  one table: equality on common, rare and absent values, narrow and wide
                  ranges (partition keys l_shipdate and o_orderdate among them), IN lists of
                  3-20 items, conjunctions over correlated columns (in the skewed variants
                  l_discount follows l_quantity; ship, commit and receipt dates always move
                  together; p_brand names its p_mfgr)
  join        30  two- and three-table joins, filters on the dimension side
  star-chain  15  four- and five-table star and chain joins, among them foreign key to
                  foreign key joins (lineitem-partsupp on both keys, c_nationkey = s_nationkey)
  near-empty   5  results of zero or a handful of rows whatever the variant

Keys whose frequencies differ between the uniform and the skewed data are placeholders
({hot_partkey}, ...) filled per variant from PARAMETERS: each is a query whose rows, joined
with ", ", give the value (the hottest key, a list of the hottest keys, a rarely used key, a
key of the domain that no fact row uses). `Query.render(params)` gives the SQL to run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

KINDS = ("single", "join", "star-chain", "near-empty")

# name -> query whose rows (one column, in order) joined with ", " give the placeholder
PARAMETERS: dict[str, str] = {
    "hot_partkey": (
        "SELECT l_partkey FROM lineitem GROUP BY l_partkey ORDER BY COUNT(*) DESC, l_partkey "
        "LIMIT 1"
    ),
    "hot_partkeys": (
        "SELECT l_partkey FROM lineitem GROUP BY l_partkey ORDER BY COUNT(*) DESC, l_partkey "
        "LIMIT 5"
    ),
    "rare_partkey": (
        "SELECT l_partkey FROM lineitem GROUP BY l_partkey ORDER BY COUNT(*), l_partkey LIMIT 1"
    ),
    # a part no line item uses if there is one (the skewed data has many), else one past the
    # domain (the uniform data uses every part)
    "absent_partkey": (
        "SELECT COALESCE(MIN(p_partkey), (SELECT MAX(p_partkey) + 1 FROM part)) FROM part "
        "WHERE NOT EXISTS (SELECT 1 FROM lineitem WHERE l_partkey = p_partkey)"
    ),
    "hot_suppkey": (
        "SELECT l_suppkey FROM lineitem GROUP BY l_suppkey ORDER BY COUNT(*) DESC, l_suppkey "
        "LIMIT 1"
    ),
    "hot_custkey": (
        "SELECT o_custkey FROM orders GROUP BY o_custkey ORDER BY COUNT(*) DESC, o_custkey LIMIT 1"
    ),
    "rare_custkey": (
        "SELECT o_custkey FROM orders GROUP BY o_custkey ORDER BY COUNT(*), o_custkey LIMIT 1"
    ),
    # TPC-H leaves every third customer without orders; the skewed data leaves more
    "absent_custkey": (
        "SELECT MIN(c_custkey) FROM customer "
        "WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_custkey = c_custkey)"
    ),
}


@dataclass(frozen=True)
class Query:
    name: str
    joins: int
    kind: str
    sql: str

    def render(self, params: dict[str, str]) -> str:
        """The SQL with this variant's placeholder values filled in."""
        return self.sql.format(**params)

    @property
    def placeholders(self) -> bool:
        return "{" in self.sql


LO = "lineitem JOIN orders ON l_orderkey = o_orderkey"
LOC = f"{LO} JOIN customer ON o_custkey = c_custkey"
LOCNR = f"{LOC} JOIN nation ON c_nationkey = n_nationkey JOIN region ON n_regionkey = r_regionkey"
LP = "lineitem JOIN part ON l_partkey = p_partkey"
LPS = "lineitem JOIN partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey"


def _q(name: str, joins: int, kind: str, tables: str, where: str) -> Query:
    return Query(name, joins, kind, f"SELECT COUNT(*) FROM {tables} WHERE {where}")


_S, _J, _M, _N = KINDS

SINGLE = [
    # equality: common values
    _q("eq_common_shipmode", 0, _S, "lineitem", "l_shipmode = 'AIR'"),
    _q("eq_common_mktsegment", 0, _S, "customer", "c_mktsegment = 'BUILDING'"),
    _q("eq_common_orderpriority", 0, _S, "orders", "o_orderpriority = '1-URGENT'"),
    _q("eq_hot_partkey", 0, _S, "lineitem", "l_partkey = {hot_partkey}"),
    _q("eq_hot_custkey", 0, _S, "orders", "o_custkey = {hot_custkey}"),
    _q("eq_hot_suppkey", 0, _S, "lineitem", "l_suppkey = {hot_suppkey}"),
    # equality: rare values (first and last ship days are thin partitions)
    _q("eq_rare_partkey", 0, _S, "lineitem", "l_partkey = {rare_partkey}"),
    _q("eq_rare_custkey", 0, _S, "orders", "o_custkey = {rare_custkey}"),
    _q("eq_rare_shipdate_first", 0, _S, "lineitem", "l_shipdate = DATE '1992-01-04'"),
    _q("eq_rare_shipdate_last", 0, _S, "lineitem", "l_shipdate = DATE '1998-11-28'"),
    # equality: absent values, in and out of the column's range
    _q("eq_absent_partkey", 0, _S, "lineitem", "l_partkey = {absent_partkey}"),
    _q("eq_absent_custkey", 0, _S, "orders", "o_custkey = {absent_custkey}"),
    _q("eq_absent_shipmode", 0, _S, "lineitem", "l_shipmode = 'BOAT'"),
    _q("eq_absent_quantity", 0, _S, "lineitem", "l_quantity = 51"),
    _q("eq_absent_shipdate", 0, _S, "lineitem", "l_shipdate = DATE '1991-06-01'"),
    # ranges
    _q(
        "range_narrow_shipdate",
        0,
        _S,
        "lineitem",
        "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-07'",
    ),
    _q(
        "range_wide_shipdate",
        0,
        _S,
        "lineitem",
        "l_shipdate >= DATE '1993-01-01' AND l_shipdate < DATE '1997-07-01'",
    ),
    _q(
        "range_narrow_orderdate",
        0,
        _S,
        "orders",
        "o_orderdate >= DATE '1996-03-01' AND o_orderdate < DATE '1996-03-15'",
    ),
    _q("range_wide_totalprice", 0, _S, "orders", "o_totalprice > 50000"),
    _q("range_narrow_extendedprice", 0, _S, "lineitem", "l_extendedprice BETWEEN 50000 AND 50100"),
    _q("range_narrow_retailprice", 0, _S, "part", "p_retailprice BETWEEN 1500 AND 1510"),
    _q("range_wide_quantity", 0, _S, "lineitem", "l_quantity BETWEEN 5 AND 45"),
    # IN lists
    _q("in3_shipmode", 0, _S, "lineitem", "l_shipmode IN ('AIR', 'REG AIR', 'MAIL')"),
    _q("in10_size", 0, _S, "part", "p_size IN (1, 6, 11, 16, 21, 26, 31, 36, 41, 46)"),
    _q("in5_hot_partkeys", 0, _S, "lineitem", "l_partkey IN ({hot_partkeys})"),
    _q(
        "in20_custkey",
        0,
        _S,
        "orders",
        "o_custkey IN (" + ", ".join(str(7 * k) for k in range(1, 21)) + ")",
    ),
    # conjunctions over correlated columns
    _q("and_corr_quantity_discount", 0, _S, "lineitem", "l_quantity <= 10 AND l_discount <= 0.02"),
    _q("and_anti_quantity_discount", 0, _S, "lineitem", "l_quantity >= 40 AND l_discount <= 0.03"),
    _q(
        "and_corr_ship_receipt",
        0,
        _S,
        "lineitem",
        "l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1996-02-01' "
        "AND l_receiptdate >= DATE '1996-01-01' AND l_receiptdate < DATE '1996-02-01'",
    ),
    _q("and_corr_mfgr_brand", 0, _S, "part", "p_mfgr = 'Manufacturer#1' AND p_brand = 'Brand#12'"),
]

JOIN = [
    # two tables
    _q("lp_brand", 1, _J, LP, "p_brand = 'Brand#23'"),
    _q("lp_container_in4", 1, _J, LP, "p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')"),
    _q("lp_hot_partkey", 1, _J, LP, "p_partkey = {hot_partkey}"),
    _q("lp_rare_partkey", 1, _J, LP, "p_partkey = {rare_partkey}"),
    _q("lp_size", 1, _J, LP, "p_size <= 5"),
    _q("lp_type", 1, _J, LP, "p_type = 'ECONOMY ANODIZED STEEL'"),
    _q(
        "ls_nationkey",
        1,
        _J,
        "lineitem JOIN supplier ON l_suppkey = s_suppkey",
        "s_nationkey = 7",
    ),
    _q(
        "ls_acctbal",
        1,
        _J,
        "lineitem JOIN supplier ON l_suppkey = s_suppkey",
        "s_acctbal < 0",
    ),
    _q(
        "lo_orderdate_quarter",
        1,
        _J,
        LO,
        "o_orderdate >= DATE '1995-01-01' AND o_orderdate < DATE '1995-04-01'",
    ),
    _q("lo_priority_status", 1, _J, LO, "o_orderpriority = '1-URGENT' AND o_orderstatus = 'F'"),
    _q("lo_hot_custkey", 1, _J, LO, "o_custkey = {hot_custkey}"),
    _q(
        "oc_segment",
        1,
        _J,
        "orders JOIN customer ON o_custkey = c_custkey",
        "c_mktsegment = 'AUTOMOBILE'",
    ),
    _q("oc_nationkey", 1, _J, "orders JOIN customer ON o_custkey = c_custkey", "c_nationkey = 3"),
    _q(
        "oc_hot_custkey",
        1,
        _J,
        "orders JOIN customer ON o_custkey = c_custkey",
        "c_custkey = {hot_custkey}",
    ),
    _q("oc_acctbal", 1, _J, "orders JOIN customer ON o_custkey = c_custkey", "c_acctbal > 9000"),
    _q("pp_size", 1, _J, "partsupp JOIN part ON ps_partkey = p_partkey", "p_size = 15"),
    _q("ps_acctbal", 1, _J, "partsupp JOIN supplier ON ps_suppkey = s_suppkey", "s_acctbal < 0"),
    _q("lps_fkfk_availqty", 1, _J, LPS, "ps_availqty < 500"),
    _q(
        "cn_name",
        1,
        _J,
        "customer JOIN nation ON c_nationkey = n_nationkey",
        "n_name = 'GERMANY'",
    ),
    # three tables
    _q(
        "loc_q3",
        2,
        _J,
        LOC,
        "c_mktsegment = 'BUILDING' AND o_orderdate < DATE '1995-03-15' "
        "AND l_shipdate > DATE '1995-03-15'",
    ),
    _q(
        "lps_brand_nation",
        2,
        _J,
        f"{LP} JOIN supplier ON l_suppkey = s_suppkey",
        "p_brand = 'Brand#12' AND s_nationkey = 5",
    ),
    _q(
        "ocn_name",
        2,
        _J,
        "orders JOIN customer ON o_custkey = c_custkey JOIN nation ON c_nationkey = n_nationkey",
        "n_name = 'FRANCE'",
    ),
    _q(
        "cnr_region",
        2,
        _J,
        "customer JOIN nation ON c_nationkey = n_nationkey "
        "JOIN region ON n_regionkey = r_regionkey",
        "r_name = 'ASIA'",
    ),
    _q(
        "snr_region",
        2,
        _J,
        "supplier, nation, region",
        "s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE'",
    ),
    _q(
        "psn_name",
        2,
        _J,
        "partsupp JOIN supplier ON ps_suppkey = s_suppkey JOIN nation ON s_nationkey = n_nationkey",
        "n_name = 'JAPAN'",
    ),
    _q(
        "pps_type_acctbal",
        2,
        _J,
        "partsupp JOIN part ON ps_partkey = p_partkey JOIN supplier ON ps_suppkey = s_suppkey",
        "p_type LIKE 'STANDARD%' AND s_acctbal > 5000",
    ),
    _q("loc_hot_custkey", 2, _J, LOC, "c_custkey = {hot_custkey}"),
    _q("lpsp_fkfk_size", 2, _J, f"{LPS} JOIN part ON ps_partkey = p_partkey", "p_size = 1"),
    _q(
        "lsn_name",
        2,
        _J,
        "lineitem, supplier, nation",
        "l_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'BRAZIL'",
    ),
    _q(
        "lpo_hot_partkeys",
        2,
        _J,
        f"{LP} JOIN orders ON l_orderkey = o_orderkey",
        "p_partkey IN ({hot_partkeys}) AND o_orderdate >= DATE '1997-01-01'",
    ),
]

STAR_CHAIN = [
    _q(
        "locn_q10",
        3,
        _M,
        f"{LOC} JOIN nation ON c_nationkey = n_nationkey",
        "n_name = 'UNITED STATES' AND o_orderdate >= DATE '1993-10-01' "
        "AND o_orderdate < DATE '1994-01-01' AND l_returnflag = 'R'",
    ),
    _q("locnr_america", 4, _M, LOCNR, "r_name = 'AMERICA'"),
    _q(
        "locnr_asia_1994",
        4,
        _M,
        LOCNR,
        "r_name = 'ASIA' AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'",
    ),
    _q(
        "lpsps_fkfk_brand",
        3,
        _M,
        f"{LPS} JOIN part ON l_partkey = p_partkey JOIN supplier ON l_suppkey = s_suppkey",
        "p_brand = 'Brand#34' AND s_acctbal > 0",
    ),
    _q(
        "lpssn_fkfk_nation",
        3,
        _M,
        f"{LPS} JOIN supplier ON ps_suppkey = s_suppkey JOIN nation ON s_nationkey = n_nationkey",
        "n_name = 'CANADA'",
    ),
    _q(
        "lpspsn_fkfk_steel",
        4,
        _M,
        f"{LPS} JOIN part ON ps_partkey = p_partkey JOIN supplier ON ps_suppkey = s_suppkey "
        "JOIN nation ON s_nationkey = n_nationkey",
        "p_type LIKE '%STEEL' AND n_name = 'GERMANY'",
    ),
    _q(
        "star_lops",
        3,
        _M,
        f"{LO} JOIN part ON l_partkey = p_partkey JOIN supplier ON l_suppkey = s_suppkey",
        "p_size < 10 AND s_nationkey = 1 AND o_orderpriority = '2-HIGH'",
    ),
    _q(
        "star_lopsc",
        4,
        _M,
        f"{LOC} JOIN part ON l_partkey = p_partkey JOIN supplier ON l_suppkey = s_suppkey",
        "c_mktsegment = 'MACHINERY' AND p_container LIKE 'LG%' AND s_acctbal < 5000 "
        "AND o_orderdate >= DATE '1996-01-01' AND o_orderdate < DATE '1997-01-01'",
    ),
    _q(
        "pssnr_africa",
        3,
        _M,
        "partsupp, supplier, nation, region",
        "ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey "
        "AND r_name = 'AFRICA'",
    ),
    _q(
        "colp_hot_custkey",
        3,
        _M,
        f"{LOC} JOIN part ON l_partkey = p_partkey",
        "c_custkey = {hot_custkey} AND p_size > 25",
    ),
    _q(
        "locs_fkfk_same_nation",
        3,
        _M,
        f"{LOC} JOIN supplier ON l_suppkey = s_suppkey AND c_nationkey = s_nationkey",
        "o_orderdate >= DATE '1995-01-01' AND o_orderdate < DATE '1996-01-01'",
    ),
    _q(
        "locsn_q5_china",
        4,
        _M,
        f"{LOC} JOIN supplier ON l_suppkey = s_suppkey AND c_nationkey = s_nationkey "
        "JOIN nation ON s_nationkey = n_nationkey",
        "n_name = 'CHINA' AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'",
    ),
    _q(
        "lpspo_fkfk_green",
        3,
        _M,
        f"{LPS} JOIN part ON ps_partkey = p_partkey JOIN orders ON l_orderkey = o_orderkey",
        "p_name LIKE '%green%' AND o_orderdate >= DATE '1998-01-01'",
    ),
    _q(
        "lppss_fkfk_hot_partkey",
        3,
        _M,
        f"{LPS} JOIN part ON l_partkey = p_partkey JOIN supplier ON ps_suppkey = s_suppkey",
        "p_partkey = {hot_partkey}",
    ),
    _q(
        "ocnr_middle_east_june",
        3,
        _M,
        "orders JOIN customer ON o_custkey = c_custkey JOIN nation ON c_nationkey = n_nationkey "
        "JOIN region ON n_regionkey = r_regionkey",
        "r_name = 'MIDDLE EAST' AND o_orderdate BETWEEN DATE '1992-06-01' AND DATE '1992-06-30'",
    ),
]

NEAR_EMPTY = [
    # brand 2x belongs to manufacturer 2: a contradiction only correlation knows
    _q(
        "mfgr_brand_contradiction",
        0,
        _N,
        "part",
        "p_mfgr = 'Manufacturer#1' AND p_brand = 'Brand#23'",
    ),
    # R/A flags need a receipt before 1995-06-17, status O a ship date after it
    _q("returnflag_linestatus", 0, _N, "lineitem", "l_returnflag = 'R' AND l_linestatus = 'O'"),
    # items ship after their order: both partition keys, correlated across the join
    _q(
        "lo_ship_before_order",
        1,
        _N,
        LO,
        "o_orderdate >= DATE '1998-06-01' AND l_shipdate < DATE '1998-06-01'",
    ),
    _q("loc_absent_custkey", 2, _N, LOC, "c_custkey = {absent_custkey}"),
    _q(
        "locnr_rare_custkey_air",
        4,
        _N,
        LOCNR,
        "c_custkey = {rare_custkey} AND l_shipmode = 'AIR' AND r_name = 'EUROPE'",
    ),
]

QUERIES: list[Query] = SINGLE + JOIN + STAR_CHAIN + NEAR_EMPTY


def summary() -> dict[str, int]:
    """Queries per kind."""
    return dict(Counter(q.kind for q in QUERIES))


def _check() -> None:
    names = [q.name for q in QUERIES]
    assert len(names) == len(set(names)), "query names must be unique"
    assert all(q.kind in KINDS for q in QUERIES)
    assert summary() == {"single": 30, "join": 30, "star-chain": 15, "near-empty": 5}, summary()
    for q in QUERIES:
        tables = q.sql.split(" FROM ", 1)[1].split(" WHERE ", 1)[0]
        count = tables.count(" JOIN ") + tables.count(",") + 1
        assert count == q.joins + 1, (q.name, count, q.joins)


_check()

"""Star and chain joins for the skewed TPC-H lake (benchmarks/plans.py --set star).

Each query joins lineitem (and mostly orders) to filtered dimensions (customer, part,
supplier, nation, region, partsupp), several of them on the keys the zipf-* variants skew
(l_partkey, l_suppkey, o_custkey; benchmarks/data.py), and aggregates to a modest number of
rows. They are written as a user would write them: the fact table first, the big and
unselective join to orders next, the selective dimension filters last, so the order in which
a planner joins matters. Spark SQL over the unqualified TPC-H table names; no trailing
semicolons.
"""

from __future__ import annotations

QUERIES: dict[str, str] = {
    # parts of one brand and container (0.1% of parts) bought by one market segment, by the
    # customer's nation: the selective part filter comes after lineitem x orders x customer
    "s1": """
SELECT n.n_name, COUNT(*) AS line_count, SUM(l.l_extendedprice * (1 - l.l_discount)) AS revenue
FROM lineitem l
JOIN orders o ON l.l_orderkey = o.o_orderkey
JOIN customer c ON o.o_custkey = c.c_custkey
JOIN nation n ON c.c_nationkey = n.n_nationkey
JOIN part p ON l.l_partkey = p.p_partkey
WHERE p.p_brand = 'Brand#23'
    AND p.p_container = 'MED BOX'
    AND c.c_mktsegment = 'BUILDING'
GROUP BY n.n_name
ORDER BY revenue DESC, n.n_name
""",
    # suppliers of one region with a negative balance, orders of one year: lineitem x orders
    # first, the supplier chain (skewed l_suppkey) last
    "s2": """
SELECT n.n_name, YEAR(o.o_orderdate) AS o_year, SUM(l.l_quantity) AS quantity,
    SUM(l.l_extendedprice * (1 - l.l_discount)) AS revenue
FROM lineitem l
JOIN orders o ON l.l_orderkey = o.o_orderkey
JOIN supplier s ON l.l_suppkey = s.s_suppkey
JOIN nation n ON s.s_nationkey = n.n_nationkey
JOIN region r ON n.n_regionkey = r.r_regionkey
WHERE r.r_name = 'EUROPE'
    AND s.s_acctbal < 0
    AND o.o_orderdate >= DATE '1995-01-01'
    AND o.o_orderdate < DATE '1996-01-01'
GROUP BY n.n_name, YEAR(o.o_orderdate)
ORDER BY n.n_name, o_year
""",
    # customers of one nation (skewed o_custkey), air shipments, by market segment and ship
    # mode: the nation filter is reached through orders and customer
    "s3": """
SELECT c.c_mktsegment, l.l_shipmode, COUNT(*) AS line_count,
    SUM(l.l_extendedprice) AS gross
FROM lineitem l
JOIN orders o ON l.l_orderkey = o.o_orderkey
JOIN customer c ON o.o_custkey = c.c_custkey
JOIN nation n ON c.c_nationkey = n.n_nationkey
WHERE n.n_name = 'JAPAN'
    AND l.l_shipmode IN ('AIR', 'REG AIR')
    AND o.o_orderpriority = '1-URGENT'
GROUP BY c.c_mktsegment, l.l_shipmode
ORDER BY c.c_mktsegment, l.l_shipmode
""",
    # lineitem x partsupp on the skewed (part, supplier) pair first, then small brass parts
    # and German suppliers
    "s4": """
SELECT p.p_size, COUNT(*) AS line_count, SUM(l.l_quantity * ps.ps_supplycost) AS cost
FROM lineitem l
JOIN partsupp ps ON l.l_partkey = ps.ps_partkey AND l.l_suppkey = ps.ps_suppkey
JOIN part p ON l.l_partkey = p.p_partkey
JOIN supplier s ON l.l_suppkey = s.s_suppkey
JOIN nation n ON s.s_nationkey = n.n_nationkey
WHERE p.p_type LIKE '%BRASS'
    AND p.p_size <= 5
    AND n.n_name = 'GERMANY'
GROUP BY p.p_size
ORDER BY p.p_size
""",
    # the twenty best rich automobile customers (skewed o_custkey): lineitem x orders first
    "s5": """
SELECT c.c_custkey, c.c_name, COUNT(DISTINCT o.o_orderkey) AS order_count,
    SUM(l.l_extendedprice * (1 - l.l_discount)) AS revenue
FROM lineitem l
JOIN orders o ON l.l_orderkey = o.o_orderkey
JOIN customer c ON o.o_custkey = c.c_custkey
WHERE c.c_acctbal > 9900
    AND c.c_mktsegment = 'AUTOMOBILE'
GROUP BY c.c_custkey, c.c_name
ORDER BY revenue DESC, c.c_custkey
LIMIT 20
""",
    # a chain over both skewed sides: one part type bought by customers of one region from
    # suppliers of the same region, by year (after TPC-H Q8, the joins in the user's order)
    "s6": """
SELECT YEAR(o.o_orderdate) AS o_year, sn.n_name AS supp_nation, COUNT(*) AS line_count,
    SUM(l.l_extendedprice * (1 - l.l_discount)) AS volume
FROM lineitem l
JOIN orders o ON l.l_orderkey = o.o_orderkey
JOIN customer c ON o.o_custkey = c.c_custkey
JOIN nation cn ON c.c_nationkey = cn.n_nationkey
JOIN region r ON cn.n_regionkey = r.r_regionkey
JOIN supplier s ON l.l_suppkey = s.s_suppkey
JOIN nation sn ON s.s_nationkey = sn.n_nationkey
JOIN part p ON l.l_partkey = p.p_partkey
WHERE r.r_name = 'AMERICA'
    AND sn.n_regionkey = r.r_regionkey
    AND p.p_type = 'ECONOMY ANODIZED STEEL'
GROUP BY YEAR(o.o_orderdate), sn.n_name
ORDER BY o_year, supp_nation
""",
    # late deliveries of large parts from suppliers of one nation, one quarter of orders:
    # lineitem x orders x part (unselective) before the supplier filter
    "s7": """
SELECT p.p_mfgr, COUNT(*) AS late_lines, SUM(l.l_extendedprice) AS late_value
FROM lineitem l
JOIN orders o ON l.l_orderkey = o.o_orderkey
JOIN part p ON l.l_partkey = p.p_partkey
JOIN supplier s ON l.l_suppkey = s.s_suppkey
JOIN nation n ON s.s_nationkey = n.n_nationkey
WHERE n.n_name = 'BRAZIL'
    AND p.p_size >= 40
    AND l.l_receiptdate > l.l_commitdate
    AND o.o_orderdate >= DATE '1996-04-01'
    AND o.o_orderdate < DATE '1996-07-01'
GROUP BY p.p_mfgr
ORDER BY p.p_mfgr
""",
    # customer and supplier of the same nation (Q5's shape): orders and lineitem first, the
    # two dimension chains and the nation filter last
    "s8": """
SELECT n.n_name, c.c_mktsegment, COUNT(*) AS line_count,
    SUM(l.l_extendedprice * (1 - l.l_discount)) AS revenue
FROM orders o
JOIN lineitem l ON l.l_orderkey = o.o_orderkey
JOIN customer c ON o.o_custkey = c.c_custkey
JOIN supplier s ON l.l_suppkey = s.s_suppkey AND c.c_nationkey = s.s_nationkey
JOIN nation n ON s.s_nationkey = n.n_nationkey
WHERE n.n_name IN ('FRANCE', 'GERMANY')
    AND o.o_orderdate >= DATE '1994-01-01'
    AND o.o_orderdate < DATE '1995-01-01'
GROUP BY n.n_name, c.c_mktsegment
ORDER BY n.n_name, c.c_mktsegment
""",
}

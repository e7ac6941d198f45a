"""One module per plan operator, each `derive(stats, node) -> NodeStats` with its helpers
next to it (Spark's per-operator estimation classes behind its statistics visitor):
`StatsQuery` (optimizer.estimate.stats_query) dispatches a node to its operator's `derive`
and caches the result. The rules are those of docs/design.md#estimates and, beyond the Hive
CBO proposal, docs/estimator.md."""

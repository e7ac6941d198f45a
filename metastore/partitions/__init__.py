"""The typed partition index: each table's partitions in a table of their own, one column
per key of the key's SQL type (store), Hive's `k=v` partition names (names), the partition
filter every front end makes (filters) and its one compilation (filter_sql), the `--where`
language (where), and the tree of pre-merged blocks over partition ids (block_tree).
Imports only metastore's base modules (engine, models, errors, types)."""

"""A cost-based optimizer fed by the metastore: SQL (sqlglot) -> logical plan -> estimates."""

"""The protocols `statlas daemon` serves, each over the metastore: the HTTP API
(servers.http), the Hive Metastore Thrift API (servers.hive_metastore), who may do what on
them (servers.authorization), and the daemon process that runs them beside the pruning
daemon's scheduler (servers.daemon)."""

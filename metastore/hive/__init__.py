"""What Hive Metastore clients keep here: databases, tables, partitions, functions, locks,
notifications and the statistics engines write, as the Thrift API (servers.hive_metastore)
reads and writes them; `catalog` gathers the names its callers use. Imports every other
part of metastore."""

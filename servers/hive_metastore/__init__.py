"""The Hive Metastore Thrift service: Spark, Hive and Trino use statlas as their metastore.

See docs/hive-metastore.md for what is served and how engines are pointed at it.
"""

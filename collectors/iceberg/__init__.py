"""Iceberg tables (docs/iceberg.md): where one is found (`source`: a pyiceberg SQL or Hive
catalog, or statlas's own Hive Metastore API), its current snapshot as typed partitions
(`listing`), registered as a statlas table (`register`), read by the collection scan
(`reader`), and its distinct counts published back as a Puffin statistics file
(`puffin`, `publish`)."""

"""The catalog of tables: registration and refresh from a listing (tables, discovery,
schema_merge), column names in any case and nested fields (column_names), what makes a
table's state current (stamps), and partition lookups by lists, tuples and filters
(lookup). Imports metastore.partitions and the base modules."""

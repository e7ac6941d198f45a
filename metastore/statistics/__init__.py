"""Statistics of any set of partitions: one column's figures and sketches as stored and
merged (column_pieces), histograms (histograms), the merged statistics of a selection
(summaries), pre-merged blocks (rollups), row samples (samples) and where a partition's is
kept (partition_samples), sketches stored in smaller forms (kll_packing, exact_sets,
exact_top_k, from_top_k) and the per-process cache of what was read (cache). Imports
metastore.catalog, metastore.partitions and the base."""

package statlas.collect;

import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;

/**
 * statlas's collection scan as ONE pass over the rows: every column's statistics of every
 * partition are updated row by row in one loop (one state per partition and column), instead
 * of some forty of Spark's typed aggregates, each with its own buffer, serialisation and
 * merge per group. The result is the DataFrame Spark's aggregation would give
 * (collectors/aggregations.py): one row per partition, the partition keys, then
 * {@code __rows}, {@code c<i>__nn}, {@code __min}, {@code __max}, {@code __len},
 * {@code __maxlen}, {@code __theta} or {@code __hll}, {@code __kll}, {@code __topk} and the
 * row sample, packed by column as {@code __sample_columns} ({@link SampleColumns}; Spark's
 * aggregation gives it as rows, {@code __sample}); its sketches are the bytes Spark's hll_sketch_agg,
 * theta_sketch_agg, kll_sketch_agg_double and approx_top_k_accumulate write, fed the same
 * values (so sketches of either scan merge).
 *
 * <p>A partition read by several tasks (several files or splits) is merged by key in a
 * second, small stage.
 */
public final class PartitionScan {
  private PartitionScan() {}

  /** The session setting that, false, reads a columnar source as rows (Spark's) all the same. */
  static final String COLUMNAR = "spark.statlas.scan.columnar";

  /**
   * The scan of {@code frame} as it is read: each partition key under its name, each column
   * described read from {@code sources} (Spark SQL references: a column, or a path into a
   * struct) under its name in {@code columns}, and scanned (the rows in that order, keys
   * then columns). The lists are {@link Packed}, so a scan's arguments cross from Python in
   * one call.
   */
  public static Dataset<Row> scanPacked(
      Dataset<Row> frame,
      String keys,
      String sources,
      String columns,
      String specs,
      String sampled,
      double sampleRate,
      long seed,
      int partitions,
      String forcedColumns,
      String forcedKeys) {
    Dataset<Row> projected = project(frame, keys, sources, columns);
    return scan(
        projected,
        Packed.strings(keys),
        Packed.strings(columns),
        Packed.strings(specs),
        Packed.ints(sampled),
        sampleRate,
        seed,
        partitions,
        Packed.ints(forcedColumns),
        Arrays.stream(Packed.strings(forcedKeys)).map(Packed::longs).toArray(long[][]::new));
  }

  /** {@code frame}'s keys then columns ({@link #scanPacked}'s lists), under their names. */
  private static Dataset<Row> project(
      Dataset<Row> frame, String keys, String sources, String columns) {
    String[] references = Packed.strings(sources);
    String[] aliases = Packed.strings(columns);
    if (references.length != aliases.length) {
      throw new IllegalArgumentException(
          references.length + " sources for " + aliases.length + " columns");
    }
    List<org.apache.spark.sql.Column> projection = new ArrayList<>();
    for (String key : Packed.strings(keys)) {
      projection.add(org.apache.spark.sql.functions.col(quote(key)).as(key));
    }
    for (int i = 0; i < references.length; i++) {
      projection.add(org.apache.spark.sql.functions.col(references[i]).as(aliases[i]));
    }
    return (Dataset<Row>)
        frame.select(scala.jdk.javaapi.CollectionConverters.asScala(projection).toSeq());
  }

  /** Whether {@link #scanPacked} of these lists reads {@code frame}'s columnar batches
   * ({@link ColumnarSource}) rather than its rows, as the session is set. */
  public static boolean readsBatches(
      Dataset<Row> frame, String keys, String sources, String columns) {
    Dataset<Row> projected = project(frame, keys, sources, columns);
    return batchesWanted(projected.sparkSession()) && ColumnarSource.of(projected) != null;
  }

  private static boolean batchesWanted(SparkSession session) {
    return !"false".equals(session.conf().get(COLUMNAR, "true"));
  }

  /**
   * The scan of {@code projected}, whose columns are {@code keys} (its partition-key
   * columns) then {@code columns} (the columns to describe), in that order, each with its
   * plan ({@link ColumnSpec#parse}); {@code sampled} the indexes (into {@code columns}) of
   * the columns a row sample keeps; {@code sampleRate} the Bernoulli rate of that sample (0:
   * none). {@code partitions}: how many partitions the scan covers (sizes the merge stage).
   * A row whose value of a column of {@code forcedColumns} (integral ones) is one of that
   * column's {@code forcedKeys} is sampled whatever the draw, and marked so
   * (collectors/forced_keys.py).
   */
  private static Dataset<Row> scan(
      Dataset<Row> projected,
      String[] keys,
      String[] columns,
      String[] specs,
      int[] sampled,
      double sampleRate,
      long seed,
      int partitions,
      int[] forcedColumns,
      long[][] forcedKeys) {
    SparkSession session = projected.sparkSession();
    StructType schema = projected.schema();
    DataType[] keyTypes = new DataType[keys.length];
    for (int i = 0; i < keys.length; i++) {
      keyTypes[i] = schema.apply(keys[i]).dataType();
    }
    ColumnSpec[] plans = new ColumnSpec[columns.length];
    for (int i = 0; i < columns.length; i++) {
      plans[i] = ColumnSpec.parse(specs[i], schema.apply(columns[i]).dataType());
    }
    ZoneId zone = ZoneId.of(session.sessionState().conf().sessionLocalTimeZone());
    ScanLayout layout = new ScanLayout(
        keyTypes, plans, sampled, sampleRate, seed, zone, forcedColumns, forcedKeys);

    ColumnarSource columnar = batchesWanted(session) ? ColumnarSource.of(projected) : null;
    JavaPairRDD<List<Object>, PartitionState> perTask;
    int tasks;
    boolean withinTasks = false; // each partition read by one task: nothing to merge across
    if (columnar != null) {
      int[] vectorOf = columnar.vectorOf;
      JavaRDD<ColumnarBatch> read = columnar.batches.toJavaRDD();
      perTask = read.mapPartitionsToPair(iterator -> scanBatches(iterator, vectorOf, layout));
      tasks = read.getNumPartitions();
      withinTasks = columnar.partitionsWithinTasks(keys);
    } else {
      JavaRDD<InternalRow> rows = projected.queryExecution().toRdd().toJavaRDD();
      perTask = rows.mapPartitionsToPair(iterator -> scanTask(iterator, layout));
      tasks = rows.getNumPartitions();
    }
    int reducers =
        Math.max(1, Math.max(session.sparkContext().defaultParallelism(), partitions / 64));
    // no map-side combine: a task already hands on one state per partition it read (two
    // only when a partition's files are not contiguous), and Spark's combining map would
    // estimate the size of every state it holds (SizeEstimator: ~13% of a scan's time)
    // a scan of one task (a small partition's file), or one whose every partition's files
    // are read by one task, has nothing to merge across tasks: its states are merged where
    // they are, without a second stage and its shuffle (each task's rows reach the driver
    // as it ends, while the scan goes on)
    JavaRDD<InternalRow> merged =
        tasks == 1 || withinTasks
            ? perTask.mapPartitions(states -> mergeByKey(states, layout))
            : perTask
                .partitionBy(new HashPartitioner(reducers))
                .mapPartitions(states -> mergeByKey(states, layout));
    return session.internalCreateDataFrame(merged.rdd(), layout.outputSchema(keys), false);
  }

  private static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /**
   * One task: its rows, partition by partition (a file's rows are one partition's), each
   * partition's state handed on as soon as its rows end, so a task holds one partition's
   * state at a time; a partition met twice in a task is merged by the next stage.
   */
  private static Iterator<Tuple2<List<Object>, PartitionState>> scanTask(
      Iterator<InternalRow> rows, ScanLayout layout) {
    int taskIndex = org.apache.spark.TaskContext.getPartitionId();
    RowSampler sampler = new RowSampler(layout.sampleRate, layout.seed + taskIndex);
    return new Iterator<>() {
      private InternalRow pending; // the first row of the next partition (copied)
      private boolean emitted;

      @Override
      public boolean hasNext() {
        // an unpartitioned table with no rows still has one (empty) partition
        return pending != null || rows.hasNext() || (!emitted && layout.keyTypes.length == 0);
      }

      @Override
      public Tuple2<List<Object>, PartitionState> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        emitted = true;
        if (pending == null && !rows.hasNext()) {
          return new Tuple2<>(new ArrayList<>(), new LiveState(layout, sampler).finish());
        }
        InternalRow first = pending != null ? pending : rows.next();
        pending = null;
        List<Object> key = layout.key(first);
        LiveState state = new LiveState(layout, sampler);
        state.update(first);
        while (rows.hasNext()) {
          InternalRow row = rows.next();
          if (!sameKey(row, key, layout)) {
            pending = row.copy(); // the scan reuses its row object
            break;
          }
          state.update(row);
        }
        return new Tuple2<>(key, state.finish());
      }
    };
  }

  /**
   * One task of a columnar source ({@link ColumnarSource}): as {@link #scanTask}, its
   * batches' rows run by run of one partition (a batch is one file's, so its keys are
   * constant where the source gives them as constant vectors), each run described column by
   * column ({@link LiveState#update(ColumnarBatchRow, ColumnVector[], int, int, Dedup)}).
   */
  private static Iterator<Tuple2<List<Object>, PartitionState>> scanBatches(
      Iterator<ColumnarBatch> batches, int[] vectorOf, ScanLayout layout) {
    int taskIndex = org.apache.spark.TaskContext.getPartitionId();
    RowSampler sampler = new RowSampler(layout.sampleRate, layout.seed + taskIndex);
    Dedup dedup = new Dedup(layout.columns.length);
    ColumnVector[] vectors = new ColumnVector[vectorOf.length];
    ColumnarBatchRow view = new ColumnarBatchRow(vectors);
    return new Iterator<>() {
      private ColumnarBatch batch;
      private int position; // the batch's next row not yet described
      private boolean constantKeys;
      private boolean emitted;

      /** Whether a row is left, moving on to the next batch with rows if need be. */
      private boolean rowsLeft() {
        while ((batch == null || position >= batch.numRows()) && batches.hasNext()) {
          batch = batches.next();
          position = 0;
          constantKeys = true;
          for (int o = 0; o < vectorOf.length; o++) {
            vectors[o] = batch.column(vectorOf[o]);
            if (o < layout.keyTypes.length && !(vectors[o] instanceof ConstantColumnVector)) {
              constantKeys = false;
            }
          }
        }
        return batch != null && position < batch.numRows();
      }

      @Override
      public boolean hasNext() {
        return rowsLeft() || (!emitted && layout.keyTypes.length == 0);
      }

      @Override
      public Tuple2<List<Object>, PartitionState> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        emitted = true;
        LiveState state = new LiveState(layout, sampler);
        if (!rowsLeft()) {
          return new Tuple2<>(new ArrayList<>(), state.finish());
        }
        view.rowId = position;
        List<Object> key = layout.key(view);
        while (true) {
          int end = batch.numRows();
          if (!constantKeys) {
            for (int i = position + 1; i < end; i++) {
              view.rowId = i;
              if (!sameKey(view, key, layout)) {
                end = i;
                break;
              }
            }
          }
          state.update(view, vectors, position, end, dedup);
          position = end;
          if (!rowsLeft()) {
            break;
          }
          view.rowId = position;
          if (!sameKey(view, key, layout)) {
            break;
          }
        }
        return new Tuple2<>(key, state.finish());
      }
    };
  }

  /** The reduce side: the states of each partition merged, as result rows. */
  private static Iterator<InternalRow> mergeByKey(
      Iterator<Tuple2<List<Object>, PartitionState>> states, ScanLayout layout) {
    Map<List<Object>, PartitionState> merged = new HashMap<>();
    while (states.hasNext()) {
      Tuple2<List<Object>, PartitionState> entry = states.next();
      merged.merge(entry._1(), entry._2(), (a, b) -> a.merge(b, layout));
    }
    List<InternalRow> rows = new ArrayList<>(merged.size());
    for (Map.Entry<List<Object>, PartitionState> entry : merged.entrySet()) {
      rows.add(entry.getValue().toRow(entry.getKey(), layout));
    }
    return rows.iterator();
  }

  private static boolean sameKey(InternalRow row, List<Object> key, ScanLayout layout) {
    for (int i = 0; i < layout.keyTypes.length; i++) {
      Object value = row.isNullAt(i) ? null : row.get(i, layout.keyTypes[i]);
      if (!Objects.equals(value, key.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** The output schema's field for a statistic (used by {@link ScanLayout}). */
  static StructField field(String name, DataType type) {
    return new StructField(name, type, true, org.apache.spark.sql.types.Metadata.empty());
  }
}

package statlas.collect;

import java.io.Serializable;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The shape of a scan's rows (the partition keys, then the described columns) and of its
 * result (collectors/aggregations.py names the fields).
 */
final class ScanLayout implements Serializable {
  private static final long serialVersionUID = 1L;

  final DataType[] keyTypes;
  final ColumnSpec[] columns;
  final int[] sampled;
  final double sampleRate;
  final long seed;
  final ZoneId zone;
  /** The integral columns whose listed values put a row in the sample whatever the draw. */
  final int[] forcedColumns;
  /** Those values, per column, sorted. */
  final long[][] forcedKeys;

  ScanLayout(DataType[] keyTypes, ColumnSpec[] columns, int[] sampled, double sampleRate,
      long seed, ZoneId zone, int[] forcedColumns, long[][] forcedKeys) {
    if (forcedColumns.length != forcedKeys.length) {
      throw new IllegalArgumentException(
          forcedColumns.length + " forced columns for " + forcedKeys.length + " lists of keys");
    }
    this.keyTypes = keyTypes;
    this.columns = columns;
    this.sampled = sampled;
    this.sampleRate = sampled.length > 0 ? sampleRate : 0.0;
    this.seed = seed;
    this.zone = zone;
    boolean drawing = this.sampleRate > 0 && this.sampleRate < 1;
    List<Integer> kept = new ArrayList<>();
    for (int i = 0; i < forcedColumns.length; i++) {
      if (drawing && forcedColumns[i] >= 0 && forcedKeys[i].length > 0) {
        kept.add(i);
      }
    }
    this.forcedColumns = new int[kept.size()];
    this.forcedKeys = new long[kept.size()][];
    for (int i = 0; i < kept.size(); i++) {
      this.forcedColumns[i] = forcedColumns[kept.get(i)];
      this.forcedKeys[i] = forcedKeys[kept.get(i)].clone();
      Arrays.sort(this.forcedKeys[i]);
    }
  }

  /** Whether the sample marks its rows as forced or drawn (an extra packed column). */
  boolean forcing() {
    return forcedColumns.length > 0;
  }

  /** Whether the row's value of a forced column is one of that column's forced keys. */
  boolean forced(InternalRow row) {
    for (int i = 0; i < forcedColumns.length; i++) {
      int j = forcedColumns[i];
      int o = ordinal(j);
      if (!row.isNullAt(o)) {
        long value = ((Number) row.get(o, columns[j].type)).longValue();
        if (Arrays.binarySearch(forcedKeys[i], value) >= 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** The ordinal of column {@code j} in a scanned row. */
  int ordinal(int j) {
    return keyTypes.length + j;
  }

  /** The row's partition-key values, copied out of the (reused) row. */
  List<Object> key(InternalRow row) {
    List<Object> key = new ArrayList<>(keyTypes.length);
    for (int i = 0; i < keyTypes.length; i++) {
      key.add(row.isNullAt(i) ? null : owned(row.get(i, keyTypes[i])));
    }
    return key;
  }

  /** The sampled columns' values of the row, copied out of it, then whether it was forced
   * in (only where the layout is {@link #forcing}). */
  Object[] sampleValues(InternalRow row, boolean forced) {
    Object[] values = new Object[sampled.length + (forcing() ? 1 : 0)];
    for (int i = 0; i < sampled.length; i++) {
      int o = ordinal(sampled[i]);
      values[i] = row.isNullAt(o) ? null : owned(row.get(o, columns[sampled[i]].type));
    }
    if (forcing()) {
      values[sampled.length] = forced;
    }
    return values;
  }

  static Object owned(Object value) {
    return value instanceof UTF8String text ? text.copy() : value;
  }

  StructType outputSchema(String[] keys) {
    List<StructField> fields = new ArrayList<>();
    for (int i = 0; i < keys.length; i++) {
      fields.add(PartitionScan.field(keys[i], keyTypes[i]));
    }
    fields.add(PartitionScan.field("__rows", LongType$.MODULE$));
    for (ColumnSpec c : columns) {
      String a = c.alias;
      fields.add(PartitionScan.field(a + "__nn", LongType$.MODULE$));
      if (c.minMax) {
        fields.add(PartitionScan.field(a + "__min", c.type));
        fields.add(PartitionScan.field(a + "__max", c.type));
      }
      if (c.length) {
        fields.add(PartitionScan.field(a + "__len", LongType$.MODULE$));
        fields.add(PartitionScan.field(a + "__maxlen", IntegerType$.MODULE$));
      }
      if (c.distinct == ColumnSpec.THETA) {
        fields.add(PartitionScan.field(a + "__theta", BinaryType$.MODULE$));
      } else if (c.distinct == ColumnSpec.HLL) {
        fields.add(PartitionScan.field(a + "__hll", BinaryType$.MODULE$));
      }
      if (c.kll) {
        fields.add(PartitionScan.field(a + "__kll", BinaryType$.MODULE$));
      }
      if (c.topK != 0) {
        fields.add(PartitionScan.field(a + "__topk", BinaryType$.MODULE$));
      }
      if (c.iceberg) {
        fields.add(PartitionScan.field(a + "__iceberg", BinaryType$.MODULE$));
      }
    }
    if (sampleRate > 0) {
      fields.add(PartitionScan.field("__sample_columns", BinaryType$.MODULE$));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }
}

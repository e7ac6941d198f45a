package statlas.collect;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.datasketches.frequencies.ItemsSketch;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One partition's finished statistics (read by one task, or merged from several): counts,
 * min and max as Spark's internal values, lengths, and the sketches serialised.
 */
final class PartitionState implements Serializable {
  private static final long serialVersionUID = 1L;

  long rows;
  final long[] nonNull;
  final Object[] min;
  final Object[] max;
  final long[] totalLen;
  final int[] maxLen;
  final byte[][] distinct;
  final byte[][] kll;
  final byte[][] topK;
  /** Theta sketches of the values as Iceberg serialises them ({@link ColumnSpec#iceberg}). */
  final byte[][] iceberg;
  /** Whether the heavy hitters tell anything (LiveState.informative; kept only then). */
  final boolean[] topKInformative;
  final ArrayList<Object[]> sample;

  PartitionState(int columns) {
    nonNull = new long[columns];
    min = new Object[columns];
    max = new Object[columns];
    totalLen = new long[columns];
    maxLen = new int[columns];
    distinct = new byte[columns][];
    kll = new byte[columns][];
    topK = new byte[columns][];
    iceberg = new byte[columns][];
    topKInformative = new boolean[columns];
    sample = new ArrayList<>();
  }

  /** {@code this} with {@code other}'s rows added (both of one partition). */
  PartitionState merge(PartitionState other, ScanLayout layout) {
    rows += other.rows;
    sample.addAll(other.sample);
    for (int j = 0; j < nonNull.length; j++) {
      ColumnSpec c = layout.columns[j];
      nonNull[j] += other.nonNull[j];
      if (other.min[j] != null && (min[j] == null || compare(c, other.min[j], min[j]) < 0)) {
        min[j] = other.min[j];
      }
      if (other.max[j] != null && (max[j] == null || compare(c, other.max[j], max[j]) > 0)) {
        max[j] = other.max[j];
      }
      totalLen[j] += other.totalLen[j];
      maxLen[j] = Math.max(maxLen[j], other.maxLen[j]);
      if (c.distinct == ColumnSpec.THETA) {
        distinct[j] = Sketches.mergeTheta(distinct[j], other.distinct[j], c.thetaLgK);
      } else if (c.distinct == ColumnSpec.HLL) {
        distinct[j] = Sketches.mergeHll(distinct[j], other.distinct[j], c.hllLgK);
      }
      if (c.kll) {
        kll[j] = Sketches.mergeKll(kll[j], other.kll[j]);
      }
      if (c.topK != 0) {
        // whether the merged sketch tells anything is the merged sketch's to say: two
        // tasks' exact, even counts may add up to a purged sketch, or to a skewed one
        ItemsSketch<Object> merged = Sketches.mergedItems(topK[j], other.topK[j], c.topK);
        topK[j] = Sketches.serialized(merged, c.topK);
        topKInformative[j] = LiveState.informative(merged);
      }
      if (c.iceberg) {
        iceberg[j] = Sketches.mergeTheta(iceberg[j], other.iceberg[j], c.thetaLgK);
      }
    }
    return this;
  }

  /** Spark's ordering of two internal values of the column's type. */
  static int compare(ColumnSpec c, Object a, Object b) {
    return switch (c.kind) {
      case BOOLEAN -> Boolean.compare((Boolean) a, (Boolean) b);
      case FLOAT, DOUBLE -> compareDoubles(((Number) a).doubleValue(), ((Number) b).doubleValue());
      case DECIMAL -> ((Decimal) a).compare((Decimal) b);
      case STRING -> ((UTF8String) a).binaryCompare((UTF8String) b);
      default -> Long.compare(((Number) a).longValue(), ((Number) b).longValue());
    };
  }

  /** Spark's SQLOrderingUtil.compareDoubles: -0.0 equals 0.0, NaN above everything. */
  static int compareDoubles(double a, double b) {
    return a == b ? 0 : Double.compare(a, b);
  }

  /** The result row: keys, then the fields of {@link ScanLayout#outputSchema}. */
  InternalRow toRow(List<Object> key, ScanLayout layout) {
    List<Object> values = new ArrayList<>(key);
    values.add(rows);
    for (int j = 0; j < nonNull.length; j++) {
      ColumnSpec c = layout.columns[j];
      boolean any = nonNull[j] > 0;
      values.add(nonNull[j]);
      if (c.minMax) {
        values.add(min[j]);
        values.add(max[j]);
      }
      if (c.length) {
        values.add(any ? totalLen[j] : null);
        values.add(any ? maxLen[j] : null);
      }
      if (c.distinct == ColumnSpec.HLL) {
        values.add(Sketches.storedHll(distinct[j], c, topK[j]));
      } else if (c.distinct == ColumnSpec.THETA) {
        byte[] theta = Sketches.sizedTheta(distinct[j], c, min[j], max[j]);
        boolean built = topKInformative[j] && Sketches.thetaOfTopK(theta, topK[j], c, nonNull[j]);
        values.add(built ? Sketches.FROM_TOP_K : theta);
      }
      if (c.kll) {
        boolean counted = topKInformative[j] && Sketches.countsEveryValue(topK[j], c, nonNull[j]);
        values.add(counted ? Sketches.FROM_TOP_K : Sketches.packKll(kll[j]));
      }
      if (c.topK != 0) {
        values.add(topKInformative[j] ? Sketches.storedTopK(topK[j], c) : null);
      }
      if (c.iceberg) {
        values.add(iceberg[j]);
      }
    }
    if (layout.sampleRate > 0) {
      values.add(SampleColumns.pack(sample, layout));
    }
    return new GenericInternalRow(values.toArray());
  }
}

package statlas.collect;

import java.time.ZoneOffset;

import org.apache.datasketches.common.ArrayOfItemsSerDe;
import org.apache.datasketches.frequencies.ErrorType;
import org.apache.datasketches.frequencies.ItemsSketch;
import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.kll.KllDoublesSketch;
import org.apache.datasketches.theta.UpdateSketch;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.XXH64;
import org.apache.spark.sql.catalyst.expressions.XxHash64Function;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The statistics of one partition while its rows stream by: every column updated per row.
 * Sketches are fed exactly what collectors/aggregations.py feeds Spark's aggregates:
 * integers (tinyint, smallint, int, bigint, boolean as 0/1), dates as days and timestamps as
 * microseconds as longs; strings and binaries as their bytes; float, double and decimal
 * through xxhash64 (seed 42) for the distinct-count sketch; KLL takes the value as a double;
 * heavy hitters take longs (integral, temporal), doubles (fractional, decimal) or strings.
 */
final class LiveState {
  private static final long XXHASH_SEED = 42L;

  private final ScanLayout layout;
  private final RowSampler sampler;
  private final ColumnSpec[] columns;
  private final PartitionState result;
  private final long[] minL;
  private final long[] maxL;
  private final double[] minD;
  private final double[] maxD;
  private final HllSketch[] hll;
  private final UpdateSketch[] theta;
  private final KllDoublesSketch[] kll;
  private final ItemsSketch<Object>[] topK;
  private final UpdateSketch[] iceberg;
  private final int[] oneInt = new int[1];
  private static final byte[] FALSE_BYTE = {0};
  private static final byte[] TRUE_BYTE = {1};

  @SuppressWarnings("unchecked")
  LiveState(ScanLayout layout, RowSampler sampler) {
    this.layout = layout;
    this.sampler = sampler;
    this.columns = layout.columns;
    int n = columns.length;
    result = new PartitionState(n);
    minL = new long[n];
    maxL = new long[n];
    minD = new double[n];
    maxD = new double[n];
    hll = new HllSketch[n];
    theta = new UpdateSketch[n];
    kll = new KllDoublesSketch[n];
    topK = (ItemsSketch<Object>[]) new ItemsSketch<?>[n];
    iceberg = new UpdateSketch[n];
    for (int j = 0; j < n; j++) {
      ColumnSpec c = columns[j];
      if (c.iceberg) {
        iceberg[j] = UpdateSketch.builder().setNominalEntries(1 << c.thetaLgK).build();
      }
      if (c.distinct == ColumnSpec.HLL) {
        hll[j] = new HllSketch(c.hllLgK, Sketches.HLL_TYPE);
      } else if (c.distinct == ColumnSpec.THETA) {
        theta[j] = UpdateSketch.builder().setNominalEntries(1 << c.thetaLgK).build();
      }
      if (c.kll) {
        kll[j] = KllDoublesSketch.newHeapInstance(c.kllK);
      }
      if (c.topK != 0) {
        topK[j] = new ItemsSketch<>(c.topKMapSize);
      }
    }
  }

  void update(InternalRow row) {
    result.rows++;
    if (sampler.active()) {
      sample(row);
    }
    for (int j = 0; j < columns.length; j++) {
      int o = layout.ordinal(j);
      if (!row.isNullAt(o)) {
        value(j, row, o, 1, true);
      }
    }
  }

  /** The row in the sample if drawn (a draw per row, forced or not: the rows drawn are those
   * a scan without forced keys draws) or forced. */
  private void sample(InternalRow row) {
    boolean drawn = sampler.draw();
    boolean forced = layout.forced(row);
    if (forced || drawn) {
      result.sample.add(layout.sampleValues(row, forced));
    }
  }

  /**
   * Rows {@code from} to {@code to} (exclusive) of a columnar batch, seen through
   * {@code view} (its rowId moved): the sample draws row by row, and each column's values are
   * taken once per distinct value of the run ({@link Dedup}), with that value's count as its
   * weight. Theta and HLL take a value once whatever
   * its count, KLL and the heavy hitters take the weight, counts and lengths multiply.
   */
  void update(ColumnarBatchRow view, ColumnVector[] vectors, int from, int to, Dedup dedup) {
    result.rows += to - from;
    if (sampler.active()) {
      for (int i = from; i < to; i++) {
        view.rowId = i;
        sample(view);
      }
    }
    for (int j = 0; j < columns.length; j++) {
      int o = layout.ordinal(j);
      ColumnVector vector = vectors[o];
      ColumnSpec c = columns[j];
      if (dedup.count(j, c, vector, from, to)) {
        // heavy hitters that may purge take the rows one by one, in order, as Spark's
        // aggregate does (a purge's result depends on the order); until then, the weights
        boolean replay = c.topK != 0
            && topK[j].getNumActiveItems() + dedup.distinct > topK[j].getMaximumMapCapacity();
        for (int k = 0; k < dedup.distinct; k++) {
          view.rowId = dedup.firstRow[k];
          value(j, view, o, dedup.weight[k], !replay);
          if (replay) {
            dedup.item[k] = heavyItem(c, view, o);
          }
        }
        if (replay) {
          for (int i = from; i < to; i++) {
            int slot = dedup.slotOfRow[i - from];
            if (slot >= 0) {
              topK[j].update(dedup.item[slot]);
            }
          }
        }
      } else {
        for (int i = from; i < to; i++) {
          if (!vector.isNullAt(i)) {
            view.rowId = i;
            value(j, view, o, 1, true);
          }
        }
      }
    }
  }

  /** Column {@code j}'s non-null value at {@code o} of the row, counted {@code weight} times
   * (by the heavy hitters too if {@code heavy}). */
  private void value(int j, InternalRow row, int o, long weight, boolean heavy) {
    long[] nonNull = result.nonNull;
    boolean first = nonNull[j] == 0;
    nonNull[j] += weight;
    ColumnSpec c = columns[j];
    if (c.iceberg) {
      icebergUpdate(iceberg[j], c, row, o);
    }
    switch (c.kind) {
      case BOOLEAN -> {
        long v = row.getBoolean(o) ? 1 : 0;
        integral(j, c, v, first, weight);
      }
      case BYTE -> integral(j, c, row.getByte(o), first, weight);
      case SHORT -> integral(j, c, row.getShort(o), first, weight);
      case INT, DATE -> integral(j, c, row.getInt(o), first, weight);
      case LONG, TIMESTAMP -> integral(j, c, row.getLong(o), first, weight);
      case TIMESTAMP_NTZ -> {
        long local = row.getLong(o);
        if (c.minMax) {
          minMaxLong(j, local, first);
        }
        // sketches take unix_micros(CAST(v AS TIMESTAMP)): the local time in the session zone
        longSketches(j, c, sketchedMicros(local), weight);
      }
      case FLOAT -> {
        float v = row.getFloat(o);
        fractional(j, c, v, first, weight);
      }
      case DOUBLE -> {
        double v = row.getDouble(o);
        fractional(j, c, v, first, weight);
      }
      case DECIMAL -> decimal(j, c, row, o, first, weight);
      case STRING -> string(j, c, row.getUTF8String(o), first, weight);
      case BINARY -> binary(j, c, row.getBinary(o), weight);
      default -> { }
    }
    if (heavy && c.topK != 0) {
      topK[j].update(heavyItem(c, row, o), weight);
    }
  }

  /** A timestamp_ntz as its sketches take it: unix_micros(CAST(v AS TIMESTAMP)), the local
   * time in the session zone. */
  private long sketchedMicros(long local) {
    return DateTimeUtils.convertTz(local, layout.zone, ZoneOffset.UTC);
  }

  /**
   * The value as the heavy hitters take it (null: not taken): integral and temporal values
   * as longs, or as their decimal text (booleans as "true"/"false"); fractional and decimal
   * ones as doubles; strings and binaries as text.
   */
  private Object heavyItem(ColumnSpec c, InternalRow row, int o) {
    long v;
    switch (c.kind) {
      case BOOLEAN -> {
        boolean b = row.getBoolean(o);
        return c.topK == ColumnSpec.LONGS ? (Object) (b ? 1L : 0L) : (b ? "true" : "false");
      }
      case BYTE -> v = row.getByte(o);
      case SHORT -> v = row.getShort(o);
      case INT, DATE -> v = row.getInt(o);
      case LONG, TIMESTAMP -> v = row.getLong(o);
      case TIMESTAMP_NTZ -> v = sketchedMicros(row.getLong(o));
      case FLOAT -> {
        return c.topK == ColumnSpec.DOUBLES ? (double) row.getFloat(o) : null;
      }
      case DOUBLE -> {
        return c.topK == ColumnSpec.DOUBLES ? row.getDouble(o) : null;
      }
      case DECIMAL -> {
        DecimalType type = (DecimalType) c.type;
        return c.topK == ColumnSpec.DOUBLES
            ? doubleOf(row.getDecimal(o, type.precision(), type.scale()))
            : null;
      }
      case STRING -> {
        return row.getUTF8String(o).toString();
      }
      case BINARY -> {
        return UTF8String.fromBytes(row.getBinary(o)).toString();
      }
      default -> {
        return null;
      }
    }
    return switch (c.topK) {
      case ColumnSpec.LONGS -> v;
      case ColumnSpec.STRINGS -> Long.toString(v);
      default -> null;
    };
  }

  /**
   * The value hashed as Iceberg's single-value serialisation (Iceberg spec, Appendix D) gives
   * its bytes, as Iceberg's own Theta sketches of a column are fed: int and date as 4 bytes and
   * long, timestamp and double as 8, little-endian; float as 4; a decimal's unscaled value
   * big-endian; a string's UTF-8; a boolean as one byte. DataSketches hashes an int[] or a
   * long as it hashes their little-endian bytes.
   */
  private void icebergUpdate(UpdateSketch sketch, ColumnSpec c, InternalRow row, int o) {
    switch (c.kind) {
      case BOOLEAN -> sketch.update(row.getBoolean(o) ? TRUE_BYTE : FALSE_BYTE);
      case BYTE -> intUpdate(sketch, row.getByte(o));
      case SHORT -> intUpdate(sketch, row.getShort(o));
      case INT, DATE -> intUpdate(sketch, row.getInt(o));
      case LONG, TIMESTAMP, TIMESTAMP_NTZ -> sketch.update(row.getLong(o));
      case FLOAT -> intUpdate(sketch, Float.floatToRawIntBits(row.getFloat(o)));
      case DOUBLE -> sketch.update(Double.doubleToRawLongBits(row.getDouble(o)));
      case DECIMAL -> {
        DecimalType type = (DecimalType) c.type;
        Decimal d = row.getDecimal(o, type.precision(), type.scale());
        sketch.update(d.toJavaBigDecimal().unscaledValue().toByteArray());
      }
      case STRING -> sketch.update(row.getUTF8String(o).getBytes());
      case BINARY -> sketch.update(row.getBinary(o));
      default -> { }
    }
  }

  private void intUpdate(UpdateSketch sketch, int v) {
    oneInt[0] = v;
    sketch.update(oneInt);
  }

  private void integral(int j, ColumnSpec c, long v, boolean first, long weight) {
    if (c.minMax) {
      minMaxLong(j, v, first);
    }
    longSketches(j, c, v, weight);
  }

  /** The sketches of an integral value (booleans as 0/1). */
  private void longSketches(int j, ColumnSpec c, long v, long weight) {
    sketchLong(j, c, v);
    if (c.kll) {
      kllUpdate(kll[j], v, weight);
    }
  }

  private void minMaxLong(int j, long v, boolean first) {
    if (first) {
      minL[j] = v;
      maxL[j] = v;
    } else if (v < minL[j]) {
      minL[j] = v;
    } else if (v > maxL[j]) {
      maxL[j] = v;
    }
  }

  private void sketchLong(int j, ColumnSpec c, long v) {
    if (c.distinct == ColumnSpec.THETA) {
      theta[j].update(v);
    } else if (c.distinct == ColumnSpec.HLL) {
      hll[j].update(v);
    }
  }

  /**
   * Spark's xxhash64 (seed 42) of a float or double, as its InterpretedHashFunction
   * computes it, without its per-value look at the type: 0.0 and -0.0 as the long 0 (the int
   * 0 for a float), other values by their canonical bits (NaN one value).
   */
  static long xxhash(ColumnSpec c, double v) {
    if (c.kind == ColumnSpec.Kind.FLOAT) {
      float f = (float) v; // exact: the value was a float
      return XXH64.hashInt(f == 0.0f ? 0 : Float.floatToIntBits(f), XXHASH_SEED);
    }
    return XXH64.hashLong(v == 0.0 ? 0L : Double.doubleToLongBits(v), XXHASH_SEED);
  }

  /** ... of a decimal: a column of up to 18 digits by the unscaled long, as Spark; wider
   * ones by Spark's own function. */
  static long xxhash(ColumnSpec c, Decimal d) {
    if (((DecimalType) c.type).precision() <= 18) {
      return XXH64.hashLong(d.toUnscaledLong(), XXHASH_SEED);
    }
    return XxHash64Function.hash(d, c.type, XXHASH_SEED);
  }

  private void fractional(
      int j, ColumnSpec c, double v, boolean first, long weight) {
    if (c.minMax) {
      if (first) {
        minD[j] = v;
        maxD[j] = v;
      } else if (PartitionState.compareDoubles(v, minD[j]) < 0) {
        minD[j] = v;
      } else if (PartitionState.compareDoubles(v, maxD[j]) > 0) {
        maxD[j] = v;
      }
    }
    if (c.distinct != ColumnSpec.NO_SKETCH) {
      sketchLong(j, c, xxhash(c, v));
    }
    if (c.kll) {
      kllUpdate(kll[j], v, weight);
    }
  }

  private static final double[] POWERS_OF_TEN = new double[23];

  static {
    POWERS_OF_TEN[0] = 1;
    for (int i = 1; i < POWERS_OF_TEN.length; i++) {
      POWERS_OF_TEN[i] = POWERS_OF_TEN[i - 1] * 10; // exact: 10^22 = 2^22 * 5^22 < 2^53 * 2^22
    }
  }

  /**
   * Decimal.toDouble without its BigDecimal where the unscaled value fits 52 bits and the
   * scale 22 digits: the quotient of two exact doubles, correctly rounded, as
   * java.math.BigDecimal.doubleValue computes it then.
   */
  static double doubleOf(Decimal d) {
    if (d.precision() <= 18) {
      long unscaled = d.toUnscaledLong();
      int scale = d.scale();
      if (Math.abs(unscaled) < (1L << 52) && scale >= 0 && scale < POWERS_OF_TEN.length) {
        return scale == 0 ? (double) unscaled : unscaled / POWERS_OF_TEN[scale];
      }
    }
    return d.toDouble();
  }

  /** A KLL sketch fed {@code v} {@code weight} times (a weight of 1: the plain update). */
  private static void kllUpdate(KllDoublesSketch sketch, double v, long weight) {
    if (weight == 1) {
      sketch.update(v);
    } else {
      sketch.update(v, weight);
    }
  }

  private void decimal(int j, ColumnSpec c, InternalRow row, int o, boolean first, long weight) {
    DecimalType type = (DecimalType) c.type;
    Decimal d = row.getDecimal(o, type.precision(), type.scale());
    if (c.minMax) {
      Object[] min = result.min;
      Object[] max = result.max;
      if (first) {
        min[j] = d;
        max[j] = d;
      } else if (d.compare((Decimal) min[j]) < 0) {
        min[j] = d;
      } else if (d.compare((Decimal) max[j]) > 0) {
        max[j] = d;
      }
    }
    if (c.distinct != ColumnSpec.NO_SKETCH) {
      sketchLong(j, c, xxhash(c, d));
    }
    if (c.kll) {
      kllUpdate(kll[j], doubleOf(d), weight);
    }
  }

  private void string(int j, ColumnSpec c, UTF8String s, boolean first, long weight) {
    if (c.minMax) {
      Object[] min = result.min;
      Object[] max = result.max;
      if (first) {
        UTF8String owned = s.copy();
        min[j] = owned;
        max[j] = owned;
      } else if (s.binaryCompare((UTF8String) min[j]) < 0) {
        min[j] = s.copy();
      } else if (s.binaryCompare((UTF8String) max[j]) > 0) {
        max[j] = s.copy();
      }
    }
    if (c.length) {
      int chars = chars(s);
      result.totalLen[j] += chars * weight;
      result.maxLen[j] = Math.max(result.maxLen[j], chars);
    }
    if (c.distinct != ColumnSpec.NO_SKETCH) {
      byte[] bytes = s.getBytes();
      if (c.distinct == ColumnSpec.THETA) {
        theta[j].update(bytes);
      } else {
        hll[j].update(bytes);
      }
    }
  }

  /** The string's length in characters (UTF8String.numChars), eight bytes at a time where
   * they are ASCII (one character each). */
  static int chars(UTF8String s) {
    Object base = s.getBaseObject();
    long offset = s.getBaseOffset();
    int bytes = s.numBytes();
    int i = 0;
    for (; i + 8 <= bytes; i += 8) {
      if ((Platform.getLong(base, offset + i) & 0x8080808080808080L) != 0) {
        return s.numChars();
      }
    }
    for (; i < bytes; i++) {
      if (Platform.getByte(base, offset + i) < 0) {
        return s.numChars();
      }
    }
    return bytes;
  }

  private void binary(int j, ColumnSpec c, byte[] bytes, long weight) {
    if (c.length) {
      result.totalLen[j] += bytes.length * weight;
      result.maxLen[j] = Math.max(result.maxLen[j], bytes.length);
    }
    if (c.distinct == ColumnSpec.THETA) {
      theta[j].update(bytes);
    } else if (c.distinct == ColumnSpec.HLL) {
      hll[j].update(bytes);
    }
  }

  /**
   * Whether a partition's heavy hitters carry information (docs/design.md#sizes). A sketch
   * that purged keeps them when it names at least one value whose count, less the sketch's
   * maximum error, is still above that error (its NO_FALSE_POSITIVES items): one over values
   * about equally rare (a key column's partition: counts of 1 to 3 against an error of 2)
   * is not kept, since what it would add to a merge is within the merge's own error. A
   * sketch that never purged counts every value exactly; it is kept over at most
   * FEW_VALUES values, else only when its heaviest value holds at least twice the average
   * count and four standard deviations of a uniform draw more (a date's 120 values of about
   * 20 rows each tell nothing the distinct count does not).
   */
  static boolean informative(ItemsSketch<Object> sketch) {
    ItemsSketch.Row<Object>[] rows = sketch.getFrequentItems(ErrorType.NO_FALSE_POSITIVES);
    if (rows.length == 0) {
      return false;
    }
    int items = sketch.getNumActiveItems();
    if (sketch.getMaximumError() > 0 || items <= FEW_VALUES) {
      return true;
    }
    long heaviest = 0;
    for (ItemsSketch.Row<Object> row : rows) {
      heaviest = Math.max(heaviest, row.getEstimate());
    }
    double mean = (double) sketch.getStreamLength() / items;
    return heaviest >= 2 * mean + 4 * Math.sqrt(mean);
  }

  /** A partition's exact heavy hitters over at most this many values are always kept. */
  static final int FEW_VALUES = 16;

  /** The partition's statistics with min and max as Spark values, sketches serialised. */
  @SuppressWarnings("unchecked")
  PartitionState finish() {
    for (int j = 0; j < columns.length; j++) {
      ColumnSpec c = columns[j];
      if (c.minMax && result.nonNull[j] > 0) {
        switch (c.kind) {
          case BOOLEAN -> {
            result.min[j] = minL[j] == 1;
            result.max[j] = maxL[j] == 1;
          }
          case BYTE -> {
            result.min[j] = (byte) minL[j];
            result.max[j] = (byte) maxL[j];
          }
          case SHORT -> {
            result.min[j] = (short) minL[j];
            result.max[j] = (short) maxL[j];
          }
          case INT, DATE -> {
            result.min[j] = (int) minL[j];
            result.max[j] = (int) maxL[j];
          }
          case LONG, TIMESTAMP, TIMESTAMP_NTZ -> {
            result.min[j] = minL[j];
            result.max[j] = maxL[j];
          }
          case FLOAT -> {
            result.min[j] = (float) minD[j];
            result.max[j] = (float) maxD[j];
          }
          case DOUBLE -> {
            result.min[j] = minD[j];
            result.max[j] = maxD[j];
          }
          default -> { } // decimals and strings are kept as values already
        }
      }
      if (hll[j] != null) {
        result.distinct[j] = hll[j].toCompactByteArray();
      } else if (theta[j] != null) {
        theta[j].rebuild(); // trimmed to its nominal entries (its hash table holds more)
        // compressed: the hashes' differences, about 14% smaller (read by every DataSketches)
        result.distinct[j] = theta[j].compact().toByteArrayCompressed();
      }
      if (kll[j] != null) {
        result.kll[j] = kll[j].toByteArray();
      }
      if (iceberg[j] != null) {
        iceberg[j].rebuild();
        result.iceberg[j] = iceberg[j].compact().toByteArrayCompressed();
      }
      if (topK[j] != null) {
        result.topK[j] =
            topK[j].toByteArray((ArrayOfItemsSerDe<Object>) Sketches.serde(c.topK));
        result.topKInformative[j] = informative(topK[j]);
      }
    }
    return result;
  }
}

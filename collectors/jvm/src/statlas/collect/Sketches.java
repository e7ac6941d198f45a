package statlas.collect;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.Deflater;

import org.apache.datasketches.common.ArrayOfDoublesSerDe;
import org.apache.datasketches.common.ArrayOfItemsSerDe;
import org.apache.datasketches.common.ArrayOfLongsSerDe;
import org.apache.datasketches.common.ArrayOfStringsSerDe;
import org.apache.datasketches.frequencies.ErrorType;
import org.apache.datasketches.frequencies.ItemsSketch;
import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.TgtHllType;
import org.apache.datasketches.hll.Union;
import org.apache.datasketches.kll.KllDoublesSketch;
import org.apache.datasketches.memory.Memory;
import org.apache.datasketches.theta.CompactSketch;
import org.apache.datasketches.theta.SetOperation;
import org.apache.spark.sql.types.DecimalType;

/** Merges of serialised sketches: the same unions Spark's sketch aggregates use. */
final class Sketches {
  /** Four bits a register: half HLL_8's bytes, the same estimate (and Spark reads both). */
  static final TgtHllType HLL_TYPE = TgtHllType.HLL_4;

  private Sketches() {}

  static byte[] mergeHll(byte[] a, byte[] b, int lgK) {
    Union union = new Union(lgK);
    union.update(HllSketch.heapify(a));
    union.update(HllSketch.heapify(b));
    return union.getResult(HLL_TYPE).toCompactByteArray();
  }

  static byte[] mergeTheta(byte[] a, byte[] b, int lgK) {
    org.apache.datasketches.theta.Union union =
        SetOperation.builder().setNominalEntries(1 << lgK).buildUnion();
    union.union(CompactSketch.heapify(Memory.wrap(a)));
    union.union(CompactSketch.heapify(Memory.wrap(b)));
    return union.getResult().toByteArrayCompressed();
  }

  /**
   * A partition's Theta sketch as stored (metastore/statistics/histograms.py
   * sparse_key_lg_k): of an integral column, trimmed to the least lgK from
   * {@code c.thetaLeast} up with 2^12 x (its distinct values' share of [min, max]) hashes;
   * of other columns, or already as small, as it is.
   */
  static byte[] sizedTheta(byte[] sketch, ColumnSpec c, Object min, Object max) {
    if (sketch == null || c.thetaLeast >= c.thetaLgK || min == null || max == null) {
      return sketch;
    }
    switch (c.kind) {
      case BYTE, SHORT, INT, LONG -> { }
      default -> {
        return sketch;
      }
    }
    CompactSketch compact = CompactSketch.heapify(Memory.wrap(sketch));
    double width = (double) ((Number) max).longValue() - ((Number) min).longValue() + 1;
    double wanted = Math.max(1.0, 4096.0 * compact.getEstimate() / width);
    int lgK = (int) Math.ceil(Math.log(wanted) / Math.log(2) - 1e-9);
    lgK = Math.min(c.thetaLgK, Math.max(c.thetaLeast, lgK));
    if (compact.getRetainedEntries() <= (1 << lgK)) {
      return sketch;
    }
    org.apache.datasketches.theta.Union union =
        SetOperation.builder().setNominalEntries(1 << lgK).buildUnion();
    union.union(compact);
    return union.getResult().toByteArrayCompressed();
  }

  static byte[] mergeKll(byte[] a, byte[] b) {
    KllDoublesSketch merged = KllDoublesSketch.heapify(Memory.wrap(a));
    merged.merge(KllDoublesSketch.heapify(Memory.wrap(b)));
    return merged.toByteArray();
  }

  /** The first byte of a packed KLL sketch (metastore/statistics/kll_packing.py). */
  static final int PACKED_KLL = 0x4B;

  static final int NO_SCALE = 0xFF;
  private static final double[] POWERS = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  private static final double EXACT = 9007199254740992.0; // 2^53

  /**
   * A KLL sketch as the metastore stores it (metastore/statistics/kll_packing.py, which
   * unpacks it): each level's items sorted, as integers (times 10^scale where every item is
   * such a decimal exactly, else their IEEE bits in an order-keeping form), as differences
   * within the level, by byte plane, deflated at the fastest level behind the mark and the
   * scale; a sketch of fewer than two items deflated as it is.
   */
  static byte[] packKll(byte[] sketch) {
    if (sketch == null) {
      return null;
    }
    if (sketch.length < 20 || sketch[0] != 5) {
      return deflate(sketch, null);
    }
    ByteBuffer in = ByteBuffer.wrap(sketch).order(ByteOrder.LITTLE_ENDIAN);
    int levels = sketch[18] & 0xFF;
    int header = 20 + 4 * levels + 16;
    int count = (sketch.length - header) / 8;
    int[] bounds = new int[levels + 1];
    int first = in.getInt(20);
    for (int h = 0; h < levels; h++) {
      bounds[h] = in.getInt(20 + 4 * h) - first;
    }
    bounds[levels] = count;
    double[] items = new double[count];
    for (int i = 0; i < count; i++) {
      items[i] = in.getDouble(header + 8 * i);
    }
    for (int h = 0; h < levels; h++) {
      if (bounds[h + 1] > bounds[h]) {
        Arrays.sort(items, bounds[h], bounds[h + 1]);
      }
    }
    int scale = scaleOf(items);
    long[] integers = new long[count];
    for (int i = 0; i < count; i++) {
      if (scale == NO_SCALE) {
        long bits = Double.doubleToRawLongBits(items[i]);
        integers[i] = bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFFL);
      } else {
        integers[i] = (long) Math.rint(items[i] * POWERS[scale]);
      }
    }
    byte[] body = new byte[header + 8 * count];
    System.arraycopy(sketch, 0, body, 0, header);
    for (int h = 0; h < levels; h++) {
      for (int i = bounds[h]; i < bounds[h + 1]; i++) {
        long difference = i == bounds[h] ? integers[i] : integers[i] - integers[i - 1];
        for (int b = 0; b < 8; b++) {
          body[header + b * count + i] = (byte) (difference >>> (8 * b));
        }
      }
    }
    return deflate(body, new byte[] {(byte) PACKED_KLL, (byte) scale});
  }

  /**
   * Stored in place of a partition's KLL or Theta sketch that its stored heavy hitters stand
   * for (metastore/statistics/from_top_k.py): where they count every value the KLL sketch was
   * fed (the metastore feeds those values, each as often as counted, to a KLL sketch when it
   * reads it), or name every value of an exact Theta sketch (which it builds from them).
   */
  static final byte[] FROM_TOP_K = {(byte) 0x45};

  /**
   * Whether heavy hitters {@code topK} of a column of {@code nonNull} values name every value
   * the column's KLL sketch was fed, with its exact count: longs or doubles (the values the
   * sketch was fed as doubles), never purged, as many as the values, none NaN (which KLL
   * skips) and every long a double exactly.
   */
  static boolean countsEveryValue(byte[] topK, ColumnSpec c, long nonNull) {
    if (c.topK != ColumnSpec.LONGS && c.topK != ColumnSpec.DOUBLES) {
      return false;
    }
    ItemsSketch<Object> items = exactItems(topK, c, nonNull);
    if (items == null) {
      return false;
    }
    for (ItemsSketch.Row<Object> row : items.getFrequentItems(0, ErrorType.NO_FALSE_NEGATIVES)) {
      Object item = row.getItem();
      if (item instanceof Double d && d.isNaN()) {
        return false;
      }
      if (item instanceof Long l && Math.abs(l) > (1L << 53)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Heavy hitters {@code topK} of a column of {@code nonNull} values read, where they never
   * purged and count every one of them (else null).
   */
  @SuppressWarnings("unchecked")
  private static ItemsSketch<Object> exactItems(byte[] topK, ColumnSpec c, long nonNull) {
    if (topK == null) {
      return null;
    }
    ItemsSketch<Object> items =
        ItemsSketch.getInstance(Memory.wrap(topK), (ArrayOfItemsSerDe<Object>) serde(c.topK));
    if (items.getMaximumError() > 0 || items.getStreamLength() != nonNull
        || items.getNumActiveItems() == 0) {
      return null;
    }
    return items;
  }

  /**
   * Whether a partition's Theta sketch {@code theta} (as stored) is exactly the sketch of the
   * items of its stored heavy hitters {@code topK} (integers fed as longs, strings as their
   * UTF-8 bytes), so that the metastore can build it from them again
   * (metastore/statistics/from_top_k.py): the heavy hitters never purged, name
   * every value, and the sketch built from them holds the same hashes.
   */
  static boolean thetaOfTopK(byte[] theta, byte[] topK, ColumnSpec c, long nonNull) {
    if (theta == null) {
      return false;
    }
    switch (c.kind) {
      case BYTE, SHORT, INT, LONG -> {
        if (c.topK != ColumnSpec.LONGS) {
          return false;
        }
      }
      case STRING -> {
        if (c.topK != ColumnSpec.STRINGS) {
          return false;
        }
      }
      default -> {
        return false;
      }
    }
    ItemsSketch<Object> items = exactItems(topK, c, nonNull);
    if (items == null) {
      return false;
    }
    org.apache.datasketches.theta.UpdateSketch built =
        org.apache.datasketches.theta.UpdateSketch.builder()
            .setNominalEntries(1 << c.thetaLgK).build();
    for (ItemsSketch.Row<Object> row : items.getFrequentItems(0, ErrorType.NO_FALSE_NEGATIVES)) {
      Object item = row.getItem();
      if (item instanceof Long l) {
        built.update(l.longValue());
      } else {
        built.update((String) item);
      }
    }
    CompactSketch stored = CompactSketch.heapify(Memory.wrap(theta));
    CompactSketch mine = built.compact(true, null);
    return stored.getThetaLong() == Long.MAX_VALUE // exact: the items at any lgK
        && mine.getThetaLong() == Long.MAX_VALUE
        && Arrays.equals(hashes(stored), hashes(mine));
  }

  /** A Theta sketch's retained hashes, sorted. */
  private static long[] hashes(CompactSketch sketch) {
    long[] found = new long[sketch.getRetainedEntries()];
    org.apache.datasketches.theta.HashIterator it = sketch.iterator();
    int i = 0;
    while (it.next()) {
      found[i++] = it.get();
    }
    Arrays.sort(found);
    return found;
  }

  /** The least scale at which every item is a decimal exactly, else NO_SCALE. */
  private static int scaleOf(double[] items) {
    for (int scale = 0; scale < POWERS.length; scale++) {
      boolean exact = true;
      for (double item : items) {
        double scaled = Math.rint(item * POWERS[scale]);
        if (!(Math.abs(scaled) < EXACT) || scaled / POWERS[scale] != item) {
          exact = false;
          break;
        }
      }
      if (exact) {
        return scale;
      }
    }
    return NO_SCALE;
  }

  /**
   * An HLL or heavy-hitters sketch as the metastore stores it: deflated where that is
   * smaller (registers of HLL mode, about 0.57 of their bytes; heavy hitters' weights and
   * items, about half), else as it is (lists and sets of coupons, which are random); neither
   * sketch begins with zlib's 0x78 (histograms.inflated).
   */
  static byte[] deflatedIfSmaller(byte[] sketch) {
    if (sketch == null) {
      return null;
    }
    byte[] deflated = deflate(sketch, null);
    return deflated.length < sketch.length ? deflated : sketch;
  }

  /** The first byte of heavy hitters that never purged, stored as their items and counts. */
  static final int EXACT_TOP_K = 0x46;

  /**
   * A partition's heavy hitters as the metastore stores them: where the sketch never purged
   * (it counts every value exactly), as its items and their counts
   * (metastore/statistics/exact_top_k.py: the mark, the items' kind, their number, the items
   * sorted, then each one's count, as LEB128 varints; integers and decimals of up to six
   * places as differences of integers, other doubles as their bytes, strings as their UTF-8
   * bytes after their length), when that is smaller than deflatedIfSmaller's form.
   */
  @SuppressWarnings("unchecked")
  static byte[] storedTopK(byte[] topK, ColumnSpec c) {
    byte[] stored = deflatedIfSmaller(topK);
    if (stored == null) {
      return null;
    }
    ItemsSketch<Object> items =
        ItemsSketch.getInstance(Memory.wrap(topK), (ArrayOfItemsSerDe<Object>) serde(c.topK));
    if (items.getMaximumError() > 0 || items.getNumActiveItems() == 0) {
      return stored;
    }
    ItemsSketch.Row<Object>[] rows = items.getFrequentItems(0, ErrorType.NO_FALSE_NEGATIVES);
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    out.write(EXACT_TOP_K);
    Integer[] order = new Integer[rows.length];
    for (int i = 0; i < rows.length; i++) {
      order[i] = i;
    }
    switch (c.topK) {
      case ColumnSpec.LONGS -> {
        Arrays.sort(order, (a, b) -> Long.compare((Long) rows[a].getItem(), (Long) rows[b].getItem()));
        out.write('L');
        varint(out, rows.length);
        long before = 0;
        for (int i : order) {
          long v = (Long) rows[i].getItem();
          varint(out, zigzag(v - before));
          before = v;
        }
      }
      case ColumnSpec.DOUBLES -> {
        Arrays.sort(order, (a, b) -> Double.compare((Double) rows[a].getItem(), (Double) rows[b].getItem()));
        double[] values = new double[rows.length];
        for (int i = 0; i < rows.length; i++) {
          values[i] = (Double) rows[order[i]].getItem();
        }
        for (double v : values) {
          if (Double.isNaN(v) || Double.doubleToRawLongBits(v) == Long.MIN_VALUE) {
            return stored; // read back, NaN and -0.0 are not items of their own
          }
        }
        int scale = scaleOf(values);
        out.write('D');
        out.write(scale);
        varint(out, rows.length);
        long before = 0;
        for (double v : values) {
          if (scale == NO_SCALE) {
            long bits = Double.doubleToRawLongBits(v);
            for (int b = 0; b < 8; b++) {
              out.write((int) (bits >>> (8 * b)));
            }
          } else {
            long scaled = (long) Math.rint(v * POWERS[scale]);
            varint(out, zigzag(scaled - before));
            before = scaled;
          }
        }
      }
      default -> {
        Arrays.sort(order, (a, b) -> ((String) rows[a].getItem()).compareTo((String) rows[b].getItem()));
        out.write('S');
        varint(out, rows.length);
        for (int i : order) {
          byte[] utf8 = ((String) rows[i].getItem()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
          varint(out, utf8.length);
          out.write(utf8, 0, utf8.length);
        }
      }
    }
    for (int i : order) {
      varint(out, rows[i].getEstimate());
    }
    byte[] exact = out.toByteArray();
    return exact.length < stored.length ? exact : stored;
  }

  private static long zigzag(long v) {
    return (v << 1) ^ (v >> 63);
  }

  private static void varint(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  /** The first byte of a partition's distinct values stored whole (metastore/statistics/exact_sets.py). */
  static final int EXACT_SET = 0x53;

  /** The same, of a decimal column's unscaled values, hashed before HLL (HASHED_SET). */
  static final int HASHED_SET = 0x58;

  /** Decimals of at most this many digits are read back exactly from their doubles. */
  static final int EXACT_DECIMAL_DIGITS = 15;

  /**
   * A partition's HLL sketch as the metastore stores it: where its heavy hitters never
   * purged, they hold every distinct value, and those values, sorted, are stored instead
   * when that is smaller (the least as 8 bytes, then the differences as LEB128 varints,
   * deflated: a day's 170 commit dates in 40 bytes, not 700), which the metastore hashes
   * into HLL sketches again as the scan does (metastore/statistics/exact_sets.py): EXACT_SET for a column
   * fed longs (integers, dates as days, timestamps as microseconds), HASHED_SET for a
   * decimal of up to EXACT_DECIMAL_DIGITS digits (its unscaled values, which the scan feeds
   * through Spark's xxhash64); else deflatedIfSmaller.
   */
  @SuppressWarnings("unchecked")
  static byte[] storedHll(byte[] hll, ColumnSpec c, byte[] topK) {
    byte[] stored = deflatedIfSmaller(hll);
    if (stored == null || topK == null) {
      return stored;
    }
    int mark;
    switch (c.kind) {
      case BYTE, SHORT, INT, LONG, DATE, TIMESTAMP, TIMESTAMP_NTZ -> mark = EXACT_SET;
      case DECIMAL -> mark = HASHED_SET;
      default -> {
        return stored;
      }
    }
    int scale = 0;
    if (mark == HASHED_SET) {
      DecimalType type = (DecimalType) c.type;
      if (type.precision() > EXACT_DECIMAL_DIGITS || c.topK != ColumnSpec.DOUBLES) {
        return stored;
      }
      scale = type.scale();
    } else if (c.topK != ColumnSpec.LONGS) {
      return stored;
    }
    ItemsSketch<Object> items =
        ItemsSketch.getInstance(Memory.wrap(topK), (ArrayOfItemsSerDe<Object>) serde(c.topK));
    if (items.getMaximumError() > 0 || items.getNumActiveItems() == 0) {
      return stored; // purged: not every value is named
    }
    ItemsSketch.Row<Object>[] rows = items.getFrequentItems(0, ErrorType.NO_FALSE_NEGATIVES);
    long[] values = new long[rows.length];
    for (int i = 0; i < rows.length; i++) {
      Object item = rows[i].getItem();
      if (mark == EXACT_SET) {
        values[i] = (Long) item;
        continue;
      }
      double value = (Double) item;
      BigDecimal exact = new BigDecimal(Double.toString(value)).setScale(scale, RoundingMode.HALF_UP);
      values[i] = exact.unscaledValue().longValueExact();
      if (exact.doubleValue() != value) {
        return stored; // not the decimal the double was made from
      }
    }
    Arrays.sort(values);
    ByteArrayOutputStream differences = new ByteArrayOutputStream(values.length * 2);
    for (int i = 0; i < values.length; i++) {
      long step = i == 0 ? 0 : values[i] - values[i - 1];
      while ((step & ~0x7FL) != 0) {
        differences.write((int) ((step & 0x7F) | 0x80));
        step >>>= 7;
      }
      differences.write((int) step);
    }
    byte[] prefix = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN)
        .put((byte) mark).putLong(values[0]).array();
    byte[] set = deflate(differences.toByteArray(), prefix);
    return set.length < stored.length ? set : stored;
  }

  /** `data` deflated at the fastest level, behind `prefix` if any. */
  static byte[] deflate(byte[] data, byte[] prefix) {
    Deflater deflater = new Deflater(Deflater.BEST_SPEED);
    try {
      deflater.setInput(data);
      deflater.finish();
      ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 3 + 64);
      if (prefix != null) {
        out.write(prefix, 0, prefix.length);
      }
      byte[] buffer = new byte[4096];
      while (!deflater.finished()) {
        out.write(buffer, 0, deflater.deflate(buffer));
      }
      return out.toByteArray();
    } finally {
      deflater.end();
    }
  }

  @SuppressWarnings("unchecked")
  static ItemsSketch<Object> mergedItems(byte[] a, byte[] b, int items) {
    ArrayOfItemsSerDe<Object> serde = (ArrayOfItemsSerDe<Object>) serde(items);
    ItemsSketch<Object> merged = ItemsSketch.getInstance(Memory.wrap(a), serde);
    merged.merge(ItemsSketch.getInstance(Memory.wrap(b), serde));
    return merged;
  }

  @SuppressWarnings("unchecked")
  static byte[] serialized(ItemsSketch<Object> sketch, int items) {
    return sketch.toByteArray((ArrayOfItemsSerDe<Object>) serde(items));
  }

  /** DataSketches' serialiser of heavy-hitter items, as Spark's approx_top_k uses. */
  static ArrayOfItemsSerDe<?> serde(int items) {
    return switch (items) {
      case ColumnSpec.LONGS -> new ArrayOfLongsSerDe();
      case ColumnSpec.DOUBLES -> new ArrayOfDoublesSerDe();
      default -> new ArrayOfStringsSerDe();
    };
  }
}

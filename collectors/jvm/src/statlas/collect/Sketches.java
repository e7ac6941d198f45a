package statlas.collect;

import java.io.ByteArrayOutputStream;
import java.util.zip.Deflater;

import org.apache.datasketches.common.ArrayOfDoublesSerDe;
import org.apache.datasketches.common.ArrayOfItemsSerDe;
import org.apache.datasketches.common.ArrayOfLongsSerDe;
import org.apache.datasketches.common.ArrayOfStringsSerDe;
import org.apache.datasketches.frequencies.ItemsSketch;
import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.TgtHllType;
import org.apache.datasketches.hll.Union;
import org.apache.datasketches.kll.KllDoublesSketch;
import org.apache.datasketches.memory.Memory;
import org.apache.datasketches.theta.CompactSketch;
import org.apache.datasketches.theta.SetOperation;

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

  static byte[] mergeKll(byte[] a, byte[] b) {
    KllDoublesSketch merged = KllDoublesSketch.heapify(Memory.wrap(a));
    merged.merge(KllDoublesSketch.heapify(Memory.wrap(b)));
    return merged.toByteArray();
  }

  /**
   * A KLL sketch as the metastore stores it: deflated at the fastest level, a zlib stream
   * (metastore/statistics/histograms.py inflates it; a sketch never begins with 0x78).
   */
  static byte[] deflate(byte[] sketch) {
    if (sketch == null) {
      return null;
    }
    Deflater deflater = new Deflater(Deflater.BEST_SPEED);
    try {
      deflater.setInput(sketch);
      deflater.finish();
      ByteArrayOutputStream out = new ByteArrayOutputStream(sketch.length / 3 + 64);
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
  static byte[] mergeItems(byte[] a, byte[] b, int items) {
    ArrayOfItemsSerDe<Object> serde = (ArrayOfItemsSerDe<Object>) serde(items);
    ItemsSketch<Object> merged = ItemsSketch.getInstance(Memory.wrap(a), serde);
    merged.merge(ItemsSketch.getInstance(Memory.wrap(b), serde));
    return merged.toByteArray(serde);
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

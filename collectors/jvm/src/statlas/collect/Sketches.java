package statlas.collect;

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
  static final TgtHllType HLL_TYPE = TgtHllType.HLL_8;

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
    return union.getResult().toByteArray();
  }

  static byte[] mergeKll(byte[] a, byte[] b) {
    KllDoublesSketch merged = KllDoublesSketch.heapify(Memory.wrap(a));
    merged.merge(KllDoublesSketch.heapify(Memory.wrap(b)));
    return merged.toByteArray();
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

package statlas.collect;

import java.util.Arrays;

import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;

/**
 * The distinct values of a run of rows of a column vector, each as the first row holding it
 * and how many rows do, so that a column of few values is described once per value and run,
 * not once per row: by dictionary id where the vector holds a Parquet page's ids (read
 * lazily), by value where a fixed-width value fits a long (integers, dates, timestamps,
 * decimals of up to 18 digits, floats by their bits). A column whose runs turn out mostly
 * distinct is taken row by row, tried again now and then. One per task, reused from column
 * to column.
 */
final class Dedup {
  /** How many distinct values the last {@link #count} found. */
  int distinct;
  /** For each of them, in order of first appearance: the first row holding it. */
  int[] firstRow = new int[64];
  /** ... and how many rows hold it. */
  long[] weight = new long[64];
  /** Each row's value's slot (-1: null), from the run's first row. */
  int[] slotOfRow = new int[4096];
  /** A slot's value as the heavy hitters take it, where the caller keeps it there. */
  Object[] item = new Object[64];

  /** A dictionary id's slot in firstRow and weight, plus one (0: not met yet). */
  private int[] slotOfId = new int[1024];
  /** An open-addressing table of values: keys, their slots, the run that set them. */
  private long[] keys = new long[8192];
  private int[] slotOfKey = new int[8192];
  private int[] runOfKey = new int[8192];
  private int run;
  /** Per column: runs still to take row by row before trying again (mostly distinct). */
  private final int[] rowByRow;

  /** A run of more rows than this that is more than half distinct is not deduplicated. */
  private static final int TRIAL_ROWS = 64;
  /** Runs taken row by row before a mostly distinct column is tried again. */
  private static final int PAUSE = 16;

  Dedup(int columns) {
    rowByRow = new int[columns];
  }

  /**
   * The distinct non-null values of rows {@code from} to {@code to} (exclusive) of column
   * {@code j}'s vector; false where the column is taken row by row instead.
   */
  boolean count(int j, ColumnSpec c, ColumnVector vector, int from, int to) {
    if (vector instanceof WritableColumnVector w && w.hasDictionary()) {
      countIds(w, from, to);
      return true;
    }
    if (!keyed(c) || rowByRow[j] > 0) {
      if (rowByRow[j] > 0) {
        rowByRow[j]--;
      }
      return false;
    }
    countKeys(c, vector, from, to);
    if (to - from > TRIAL_ROWS && distinct * 2 > to - from) {
      rowByRow[j] = PAUSE;
    }
    return true;
  }

  /** Whether the column's values are keyed by a long (the same long: the same value). */
  private static boolean keyed(ColumnSpec c) {
    return switch (c.kind) {
      case BOOLEAN, BYTE, SHORT, INT, DATE, LONG, TIMESTAMP, TIMESTAMP_NTZ, FLOAT, DOUBLE -> true;
      case DECIMAL -> ((DecimalType) c.type).precision() <= 18;
      default -> false;
    };
  }

  private static long key(ColumnSpec c, ColumnVector v, int i) {
    return switch (c.kind) {
      case BOOLEAN -> v.getBoolean(i) ? 1 : 0;
      case BYTE -> v.getByte(i);
      case SHORT -> v.getShort(i);
      case INT, DATE -> v.getInt(i);
      case FLOAT -> Float.floatToRawIntBits(v.getFloat(i));
      case DOUBLE -> Double.doubleToRawLongBits(v.getDouble(i));
      case DECIMAL -> ((DecimalType) c.type).precision() <= 9 ? v.getInt(i) : v.getLong(i);
      default -> v.getLong(i);
    };
  }

  private void start(int rows) {
    distinct = 0;
    if (slotOfRow.length < rows) {
      slotOfRow = new int[rows];
    }
  }

  private int newSlot(int row) {
    int slot = distinct++;
    if (slot == firstRow.length) {
      firstRow = Arrays.copyOf(firstRow, slot * 2);
      weight = Arrays.copyOf(weight, slot * 2);
      item = Arrays.copyOf(item, slot * 2);
    }
    firstRow[slot] = row;
    weight[slot] = 0;
    return slot;
  }

  private void countIds(WritableColumnVector vector, int from, int to) {
    WritableColumnVector ids = vector.getDictionaryIds();
    boolean nulls = vector.hasNull();
    start(to - from);
    for (int i = from; i < to; i++) {
      if (nulls && vector.isNullAt(i)) {
        slotOfRow[i - from] = -1;
        continue;
      }
      int id = ids.getInt(i);
      if (id >= slotOfId.length) {
        slotOfId = Arrays.copyOf(slotOfId, Math.max(id + 1, slotOfId.length * 2));
      }
      int slot = slotOfId[id] - 1;
      if (slot < 0) {
        slot = newSlot(i);
        slotOfId[id] = slot + 1;
      }
      weight[slot]++;
      slotOfRow[i - from] = slot;
    }
    for (int k = 0; k < distinct; k++) { // the table cleared for the next run
      slotOfId[ids.getInt(firstRow[k])] = 0;
    }
  }

  private void countKeys(ColumnSpec c, ColumnVector vector, int from, int to) {
    start(to - from);
    int size = keys.length;
    while (size < 2 * (to - from)) {
      size *= 2;
    }
    if (size != keys.length) {
      keys = new long[size];
      slotOfKey = new int[size];
      runOfKey = new int[size];
    }
    if (++run == 0) { // the run numbers wrapped: every entry stale again
      Arrays.fill(runOfKey, 0);
      run = 1;
    }
    int mask = size - 1;
    boolean nulls = vector.hasNull();
    for (int i = from; i < to; i++) {
      if (nulls && vector.isNullAt(i)) {
        slotOfRow[i - from] = -1;
        continue;
      }
      long k = key(c, vector, i);
      int h = (int) (k * 0x9E3779B97F4A7C15L >>> 40) & mask;
      while (runOfKey[h] == run && keys[h] != k) {
        h = (h + 1) & mask;
      }
      int slot;
      if (runOfKey[h] != run) {
        runOfKey[h] = run;
        keys[h] = k;
        slot = newSlot(i);
        slotOfKey[h] = slot;
      } else {
        slot = slotOfKey[h];
      }
      weight[slot]++;
      slotOfRow[i - from] = slot;
    }
  }
}

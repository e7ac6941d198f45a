package statlas.collect;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A partition's sampled rows packed column by column, the form metastore/samples.py
 * ({@code unpack_sample}) reads without a Python loop over the values. Little-endian: the
 * row count (int32), then each sampled column in order: a string column as one int32 length
 * per row (-1: NULL) followed by the rows' UTF-8 bytes one after the other; any other column
 * as one double per row (NaN: NULL), dates as days and timestamps as microseconds since the
 * epoch, decimals as the double nearest their value, booleans as 1 or 0; where the layout
 * forces rows in ({@link ScanLayout#forcing}), one more such column: 1 for a row forced in, 0
 * for one drawn.
 */
final class SampleColumns {
  private SampleColumns() {}

  static byte[] pack(List<Object[]> rows, ScanLayout layout) {
    int n = rows.size();
    long size = 4;
    for (int i = 0; i < layout.sampled.length; i++) {
      if (layout.columns[layout.sampled[i]].kind == ColumnSpec.Kind.STRING) {
        size += 4L * n;
        for (Object[] row : rows) {
          size += row[i] == null ? 0 : ((UTF8String) row[i]).numBytes();
        }
      } else {
        size += 8L * n;
      }
    }
    if (layout.forcing()) {
      size += 8L * n;
    }
    if (size > Integer.MAX_VALUE - 16) {
      throw new IllegalStateException("a partition's row sample exceeds 2 GB: lower sample_rows");
    }
    ByteBuffer out = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(n);
    for (int i = 0; i < layout.sampled.length; i++) {
      ColumnSpec c = layout.columns[layout.sampled[i]];
      if (c.kind == ColumnSpec.Kind.STRING) {
        for (Object[] row : rows) {
          out.putInt(row[i] == null ? -1 : ((UTF8String) row[i]).numBytes());
        }
        for (Object[] row : rows) {
          if (row[i] != null) {
            out.put(((UTF8String) row[i]).getBytes());
          }
        }
      } else {
        for (Object[] row : rows) {
          out.putDouble(row[i] == null ? Double.NaN : number(c, row[i]));
        }
      }
    }
    if (layout.forcing()) {
      int flag = layout.sampled.length;
      for (Object[] row : rows) {
        out.putDouble(((Boolean) row[flag]) ? 1.0 : 0.0);
      }
    }
    return out.array();
  }

  /** A sampled value as a double (metastore/samples.py as_number). */
  static double number(ColumnSpec c, Object value) {
    return switch (c.kind) {
      case BOOLEAN -> ((Boolean) value) ? 1.0 : 0.0;
      // correctly rounded, as Python's float(Decimal) is
      case DECIMAL -> Double.parseDouble(((Decimal) value).toJavaBigDecimal().toString());
      default -> ((Number) value).doubleValue(); // days, microseconds, integers, floats
    };
  }
}

package statlas.collect;

import java.io.Serializable;

import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * What is collected for one column (collectors/aggregations.py, ColumnPlan), parsed from
 * the plan's text: {@code alias=c3,minmax,length,distinct=theta|hll,kll,topk=longs|doubles|strings,iceberg}
 * and the sketches' sizes {@code hll=12,theta=12,k=200,items=256}. {@code iceberg}: a second
 * Theta sketch of the values as Iceberg serialises them (the one an Iceberg table publishes).
 */
final class ColumnSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  enum Kind {
    BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, DECIMAL, DATE, TIMESTAMP, TIMESTAMP_NTZ,
    STRING, BINARY, OTHER
  }

  static final int NO_SKETCH = 0;
  static final int THETA = 1;
  static final int HLL = 2;
  static final int LONGS = 1;
  static final int DOUBLES = 2;
  static final int STRINGS = 3;

  final String alias;
  final DataType type;
  final Kind kind;
  final boolean minMax;
  final boolean length;
  final int distinct;
  final boolean kll;
  final int topK;
  final int hllLgK;
  final int thetaLgK;
  /** The least lgK a sketch of an integral column is trimmed to (Sketches.sizedTheta). */
  final int thetaLeast;
  final int kllK;
  final int topKMapSize;
  final boolean iceberg;

  private ColumnSpec(String alias, DataType type, boolean minMax, boolean length, int distinct,
      boolean kll, int topK, int hllLgK, int thetaLgK, int thetaLeast, int kllK,
      int topKMapSize, boolean iceberg) {
    this.alias = alias;
    this.type = type;
    this.kind = kindOf(type);
    this.minMax = minMax;
    this.length = length;
    this.distinct = distinct;
    this.kll = kll;
    this.topK = topK;
    this.hllLgK = hllLgK;
    this.thetaLgK = thetaLgK;
    this.thetaLeast = Math.min(thetaLeast, thetaLgK);
    this.kllK = kllK;
    this.topKMapSize = topKMapSize;
    this.iceberg = iceberg;
    if (kind == Kind.OTHER
        && (minMax || length || distinct != NO_SKETCH || kll || topK != 0 || iceberg)) {
      throw new IllegalArgumentException(
          "the statlas scan has only counts for a column of type " + type.simpleString());
    }
  }

  static ColumnSpec parse(String text, DataType type) {
    String alias = null;
    boolean minMax = false;
    boolean length = false;
    boolean kll = false;
    boolean iceberg = false;
    int distinct = NO_SKETCH;
    int topK = 0;
    int hllLgK = 12;
    int thetaLgK = 12;
    int thetaLeast = Integer.MAX_VALUE; // none given: the sketch as built
    int kllK = 200;
    int items = 256;
    for (String token : text.split(",")) {
      String[] pair = token.trim().split("=", 2);
      String value = pair.length > 1 ? pair[1] : "";
      switch (pair[0]) {
        case "alias" -> alias = value;
        case "minmax" -> minMax = true;
        case "length" -> length = true;
        case "kll" -> kll = true;
        case "iceberg" -> iceberg = true;
        case "distinct" -> distinct = value.equals("theta") ? THETA : HLL;
        case "topk" -> topK = switch (value) {
          case "longs" -> LONGS;
          case "doubles" -> DOUBLES;
          default -> STRINGS;
        };
        case "hll" -> hllLgK = Integer.parseInt(value);
        case "theta" -> thetaLgK = Integer.parseInt(value);
        case "thetaleast" -> thetaLeast = Integer.parseInt(value);
        case "k" -> kllK = Integer.parseInt(value);
        case "items" -> items = Integer.parseInt(value);
        case "" -> { }
        default -> throw new IllegalArgumentException("unknown column plan item " + token);
      }
    }
    if (alias == null) {
      throw new IllegalArgumentException("a column plan needs alias=: " + text);
    }
    return new ColumnSpec(
        alias, type, minMax, length, distinct, kll, topK, hllLgK, thetaLgK, thetaLeast, kllK, items,
        iceberg);
  }

  static Kind kindOf(DataType type) {
    if (type instanceof BooleanType) return Kind.BOOLEAN;
    if (type instanceof ByteType) return Kind.BYTE;
    if (type instanceof ShortType) return Kind.SHORT;
    if (type instanceof IntegerType) return Kind.INT;
    if (type instanceof LongType) return Kind.LONG;
    if (type instanceof FloatType) return Kind.FLOAT;
    if (type instanceof DoubleType) return Kind.DOUBLE;
    if (type instanceof DecimalType) return Kind.DECIMAL;
    if (type instanceof DateType) return Kind.DATE;
    if (type instanceof TimestampType) return Kind.TIMESTAMP;
    if (type instanceof TimestampNTZType) return Kind.TIMESTAMP_NTZ;
    if (type instanceof StringType) return Kind.STRING;
    if (type instanceof BinaryType) return Kind.BINARY;
    return Kind.OTHER;
  }
}

package statlas.collect;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.FileScanRDD;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A scan's rows as the columnar batches its source reads (Parquet's and ORC's vectorised
 * readers), where the plan is only that source, its columns renamed or reordered: the batches
 * and, for each column of the scanned rows, its vector in a batch. Reading the batches
 * instead of the rows Spark would make of them lets a dictionary-encoded column be described
 * once per value ({@link Dedup}) and skips the copy of every value into a row.
 */
final class ColumnarSource {
  final RDD<ColumnarBatch> batches;
  /** The batch's vector of each column of the scanned rows. */
  final int[] vectorOf;
  /** The source's plan. */
  private final SparkPlan source;

  private ColumnarSource(RDD<ColumnarBatch> batches, int[] vectorOf, SparkPlan source) {
    this.batches = batches;
    this.vectorOf = vectorOf;
    this.source = source;
  }

  /** The batches of {@code projected}, or null where its plan is more than a columnar source
   * under a projection of its columns (a filter, a union, a coalesce, a nested field). */
  static ColumnarSource of(Dataset<Row> projected) {
    SparkPlan node = projected.queryExecution().executedPlan();
    ProjectExec project = null;
    while (true) {
      if (node instanceof WholeStageCodegenExec stage) {
        node = stage.child();
      } else if (node instanceof InputAdapter input) {
        node = input.child();
      } else if (node instanceof ProjectExec p && project == null) {
        project = p;
        node = p.child();
      } else {
        break;
      }
    }
    if (!(node instanceof ColumnarToRowExec toRows)) {
      return null;
    }
    SparkPlan source = toRows.child();
    while (source instanceof InputAdapter input) {
      source = input.child();
    }
    if (!source.supportsColumnar()) {
      return null;
    }
    List<Attribute> read = CollectionConverters.asJava(source.output());
    // (NamedExpression, a Scala trait, is not an Expression to Java)
    List<Object> columns = new java.util.ArrayList<>();
    if (project != null) {
      List<NamedExpression> named = CollectionConverters.asJava(project.projectList());
      columns.addAll(named);
    } else {
      columns.addAll(read);
    }
    int[] vectorOf = new int[columns.size()];
    for (int i = 0; i < vectorOf.length; i++) {
      Object e = columns.get(i);
      if (e instanceof Alias alias) {
        e = alias.child();
      }
      if (!(e instanceof AttributeReference reference)) {
        return null;
      }
      vectorOf[i] = -1;
      for (int k = 0; k < read.size(); k++) {
        if (read.get(k).exprId().equals(reference.exprId())) {
          vectorOf[i] = k;
          break;
        }
      }
      if (vectorOf[i] < 0) {
        return null;
      }
    }
    if (vectorOf.length != projected.schema().fields().length) {
      return null;
    }
    return new ColumnarSource(source.executeColumnar(), vectorOf, source);
  }

  /**
   * Whether each table partition's files are all read by one task (one Spark partition of
   * {@link #batches}), a partition being its values of {@code keys}: then a task's states are
   * each partition's whole, and need no merge across tasks (no second stage, and each task's
   * results reach the driver as it ends). True of a file source whose tasks
   * ({@link FilePartition}s) never share a partition's values of the keys, all of them
   * partition columns (typed, so equal values are equal keys whatever row holds them); false
   * for any other source.
   */
  boolean partitionsWithinTasks(String[] keys) {
    if (!(source instanceof FileSourceScanExec scan)
        || !(scan.inputRDD() instanceof FileScanRDD files)) {
      return false;
    }
    StructField[] fields = scan.relation().partitionSchema().fields();
    int[] fieldOf = new int[keys.length];
    for (int k = 0; k < keys.length; k++) {
      fieldOf[k] = fieldNamed(fields, keys[k]);
      if (fieldOf[k] < 0) {
        return false;
      }
    }
    Set<List<Object>> seen = new HashSet<>();
    for (FilePartition task : CollectionConverters.asJava(files.filePartitions())) {
      Set<List<Object>> own = new HashSet<>();
      for (PartitionedFile file : task.files()) {
        InternalRow values = file.partitionValues();
        List<Object> key = new ArrayList<>(keys.length);
        for (int f : fieldOf) {
          key.add(values.isNullAt(f) ? null : values.get(f, fields[f].dataType()));
        }
        own.add(key);
      }
      for (List<Object> key : own) {
        if (!seen.add(key)) {
          return false;
        }
      }
    }
    return true;
  }

  /** The field named {@code name} (else the one field named so ignoring case), or -1. */
  private static int fieldNamed(StructField[] fields, String name) {
    int found = -1;
    for (int i = 0; i < fields.length; i++) {
      if (fields[i].name().equals(name)) {
        return i;
      }
      if (fields[i].name().equalsIgnoreCase(name)) {
        if (found >= 0) {
          return -1; // two fields differ only by case: none is the key
        }
        found = i;
      }
    }
    return found;
  }
}

package statlas.collect;

import java.util.SplittableRandom;

/** Bernoulli draws of a task's rows for the row sample (metastore/samples.py). */
final class RowSampler {
  private final double rate;
  private final SplittableRandom random;

  RowSampler(double rate, long seed) {
    this.rate = rate;
    this.random = new SplittableRandom(seed);
  }

  boolean active() {
    return rate > 0;
  }

  boolean draw() {
    return rate >= 1 || random.nextDouble() < rate;
  }
}

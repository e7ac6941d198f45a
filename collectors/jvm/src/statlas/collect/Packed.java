package statlas.collect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Lists of strings handed over from Python as ONE string, each as its length in UTF-16 units,
 * a colon, then the string ({@code "2:ab0:3:xyz"} is "ab", "", "xyz"): py4j fills a Java array
 * one round trip per element, which cost more than a small scan's own work.
 */
final class Packed {
  private Packed() {}

  static String[] strings(String packed) {
    List<String> values = new ArrayList<>();
    int at = 0;
    while (at < packed.length()) {
      int colon = packed.indexOf(':', at);
      if (colon < 0) {
        throw new IllegalArgumentException("a packed list without its colon at " + at);
      }
      int end = colon + 1 + Integer.parseInt(packed.substring(at, colon));
      if (end > packed.length()) {
        throw new IllegalArgumentException("a packed string longer than the list at " + at);
      }
      values.add(packed.substring(colon + 1, end));
      at = end;
    }
    return values.toArray(new String[0]);
  }

  static int[] ints(String packed) {
    return Arrays.stream(strings(packed)).mapToInt(Integer::parseInt).toArray();
  }

  static long[] longs(String packed) {
    return Arrays.stream(strings(packed)).mapToLong(Long::parseLong).toArray();
  }
}

package dev.nvmf.target.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Short durations as operators write them: {@code 0}, {@code 200ns}, {@code 50us} ({@code µs} too), {@code 2ms},
 * {@code 1s}. A bare number is only accepted as {@code 0}: for any other value the unit says what is meant.
 */
public final class Durations {
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|us|µs|ms|s)?", Pattern.CASE_INSENSITIVE);

    private Durations() {}

    /** @return the duration in nanoseconds, or -1 if {@code text} is not a duration (or overflows a long) */
    public static long parse(String text) {
        Matcher m = DURATION.matcher(text.trim());
        if (!m.matches()) {
            return -1;
        }
        long unit = m.group(2) == null ? 0 : switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "ns" -> 1L;
            case "us", "µs" -> 1_000L;
            case "ms" -> 1_000_000L;
            default -> 1_000_000_000L;
        };
        try {
            long n = Long.parseLong(m.group(1));
            if (unit == 0) {
                return n == 0 ? 0 : -1; // "50": 50 what?
            }
            return Math.multiplyExact(n, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            return -1;
        }
    }

    /** The shortest exact form: 50000 -> "50us", 0 -> "0", 1500 -> "1500ns". */
    public static String format(long nanos) {
        if (nanos == 0) {
            return "0";
        }
        String[] units = {"s", "ms", "us"};
        long[] sizes = {1_000_000_000L, 1_000_000L, 1_000L};
        for (int i = 0; i < units.length; i++) {
            if (nanos % sizes[i] == 0) {
                return nanos / sizes[i] + units[i];
            }
        }
        return nanos + "ns";
    }
}

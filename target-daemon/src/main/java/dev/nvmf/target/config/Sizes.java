package dev.nvmf.target.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Byte sizes as operators write them: 4096, 8KiB, 8K, 1MiB, 1M, 64GiB (binary multiples, as nvmetcli/SPDK). */
public final class Sizes {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([KMGT]?)(i?B)?", Pattern.CASE_INSENSITIVE);

    private Sizes() {}

    /** @return the size in bytes, or -1 if {@code text} is not a size (or overflows a long) */
    public static long parse(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            return -1;
        }
        if (m.group(2).isEmpty() && m.group(3) != null && m.group(3).equalsIgnoreCase("iB")) {
            return -1; // "10iB" is not a unit
        }
        int shift = switch (m.group(2).toUpperCase(Locale.ROOT)) {
            case "K" -> 10;
            case "M" -> 20;
            case "G" -> 30;
            case "T" -> 40;
            default -> 0;
        };
        try {
            long base = Long.parseLong(m.group(1));
            if (base > (Long.MAX_VALUE >> shift)) {
                return -1;
            }
            return base << shift;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The shortest exact form: 8192 -> "8KiB", 1000 -> "1000". */
    public static String format(long bytes) {
        String[] units = {"TiB", "GiB", "MiB", "KiB"};
        int[] shifts = {40, 30, 20, 10};
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << shifts[i];
            if (bytes >= unit && bytes % unit == 0) {
                return (bytes >> shifts[i]) + units[i];
            }
        }
        return Long.toString(bytes);
    }
}

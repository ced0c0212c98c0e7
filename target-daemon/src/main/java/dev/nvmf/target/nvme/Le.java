package dev.nvmf.target.nvme;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Little-endian, unaligned accessors: every NVMe integer is little-endian (NVMe Base 2.0, 1.4.1) and fields are
 * at arbitrary byte offsets. Static methods only, no allocation (except the string helpers, control path only).
 */
public final class Le {
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Le() {
    }

    public static int u8(MemorySegment s, long off) {
        return s.get(ValueLayout.JAVA_BYTE, off) & 0xFF;
    }

    public static void u8(MemorySegment s, long off, int v) {
        s.set(ValueLayout.JAVA_BYTE, off, (byte) v);
    }

    public static int u16(MemorySegment s, long off) {
        return s.get(U16, off) & 0xFFFF;
    }

    public static void u16(MemorySegment s, long off, int v) {
        s.set(U16, off, (short) v);
    }

    public static int u32(MemorySegment s, long off) {
        return s.get(U32, off);
    }

    public static void u32(MemorySegment s, long off, int v) {
        s.set(U32, off, v);
    }

    public static long u64(MemorySegment s, long off) {
        return s.get(U64, off);
    }

    public static void u64(MemorySegment s, long off, long v) {
        s.set(U64, off, v);
    }

    /**
     * Writes an ASCII field padded with spaces (NVMe Base 2.0, 1.5 "ASCII string": SN, MN, FR, TRSVCID, TRADDR).
     * Characters outside printable ASCII become '?'; a longer value is cut.
     */
    public static void asciiSpacePadded(MemorySegment s, long off, int fieldLength, String value) {
        for (int i = 0; i < fieldLength; i++) {
            int c = i < value.length() ? value.charAt(i) : ' ';
            if (c < 0x20 || c > 0x7E) {
                c = '?';
            }
            s.set(ValueLayout.JAVA_BYTE, off + i, (byte) c);
        }
    }

    /** Writes a UTF-8 string NUL-padded (NQN fields): at most {@code fieldLength - 1} bytes so a NUL always ends it. */
    public static void utf8NulPadded(MemorySegment s, long off, int fieldLength, String value) {
        byte[] b = value.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(b.length, fieldLength - 1);
        for (int i = 0; i < fieldLength; i++) {
            s.set(ValueLayout.JAVA_BYTE, off + i, i < n ? b[i] : 0);
        }
    }

    /**
     * Reads a NUL-terminated UTF-8 field of {@code fieldLength} bytes; returns null if no NUL ends it within the
     * field (the host sent an unterminated NQN: a field error, not something to guess at).
     */
    public static String utf8NulTerminated(MemorySegment s, long off, int fieldLength) {
        int n = -1;
        for (int i = 0; i < fieldLength; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, off + i) == 0) {
                n = i;
                break;
            }
        }
        if (n < 0) {
            return null;
        }
        byte[] b = new byte[n];
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, off, b, 0, n);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Reads an ASCII field and strips trailing spaces and NULs. */
    public static String asciiTrimmed(MemorySegment s, long off, int fieldLength) {
        byte[] b = new byte[fieldLength];
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, off, b, 0, fieldLength);
        int n = fieldLength;
        while (n > 0 && (b[n - 1] == ' ' || b[n - 1] == 0)) {
            n--;
        }
        return new String(b, 0, n, StandardCharsets.US_ASCII);
    }
}

package dev.nvmf.target.metrics;

/**
 * The I/O commands metrics are kept for (NVM Command Set opcodes), with the label value each exports. Other
 * opcodes are counted as {@link #OTHER}, so the label set stays bounded.
 */
public enum IoOpcode {
    FLUSH(0x00, "flush"),
    WRITE(0x01, "write"),
    READ(0x02, "read"),
    WRITE_ZEROES(0x08, "write_zeroes"),
    DATASET_MANAGEMENT(0x09, "dataset_management"),
    OTHER(-1, "other");

    private static final IoOpcode[] BY_OPCODE = new IoOpcode[256];

    static {
        for (IoOpcode o : values()) {
            if (o.opcode >= 0) {
                BY_OPCODE[o.opcode] = o;
            }
        }
    }

    private final int opcode;
    private final String label;

    IoOpcode(int opcode, String label) {
        this.opcode = opcode;
        this.label = label;
    }

    public int opcode() {
        return opcode;
    }

    /** The value of the {@code opcode} label. */
    public String label() {
        return label;
    }

    /** The constant for an NVM opcode byte, {@link #OTHER} if not tracked. No allocation. */
    public static IoOpcode of(int opcode) {
        IoOpcode o = BY_OPCODE[opcode & 0xff];
        return o == null ? OTHER : o;
    }
}

package dev.nvmf.target.core.subsystem;

import java.util.concurrent.atomic.LongAdder;

/**
 * A namespace's counters for the SMART / Health log (NVMe Base 2.0 figure 207): commands and bytes, added on the
 * I/O path by any poller or backend thread. LongAdder allocates its cells only on first contention, so the warm
 * path allocates nothing.
 */
public final class IoStatistics {
    private final LongAdder readCommands = new LongAdder();
    private final LongAdder writeCommands = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder mediaErrors = new LongAdder();

    public void read(long bytes) {
        readCommands.increment();
        bytesRead.add(bytes);
    }

    public void written(long bytes) {
        writeCommands.increment();
        bytesWritten.add(bytes);
    }

    public void mediaError() {
        mediaErrors.increment();
    }

    public long readCommands() { return readCommands.sum(); }
    public long writeCommands() { return writeCommands.sum(); }
    public long bytesRead() { return bytesRead.sum(); }
    public long bytesWritten() { return bytesWritten.sum(); }
    public long mediaErrors() { return mediaErrors.sum(); }
}

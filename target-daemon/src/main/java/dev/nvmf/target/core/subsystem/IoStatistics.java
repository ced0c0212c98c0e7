package dev.nvmf.target.core.subsystem;

import dev.nvmf.target.concurrent.StripedLongs;

/**
 * A namespace's counters for the SMART / Health log (NVMe Base 2.0 figure 207): commands and bytes, added on the
 * I/O path by any poller or backend thread. Each writing thread adds to a stripe of its own with plain stores
 * ({@link StripedLongs}): one stripe lookup by thread id per command and no locked instruction; the log page, which is
 * rare, adds the stripes up. A warm thread allocates nothing.
 */
public final class IoStatistics {
    private static final int READ_COMMANDS = 0;
    private static final int WRITE_COMMANDS = 1;
    private static final int BYTES_READ = 2;
    private static final int BYTES_WRITTEN = 3;
    private static final int MEDIA_ERRORS = 4;

    private final StripedLongs counters = new StripedLongs(5);

    public void read(long bytes) {
        counters.add(READ_COMMANDS, 1, BYTES_READ, bytes);
    }

    public void written(long bytes) {
        counters.add(WRITE_COMMANDS, 1, BYTES_WRITTEN, bytes);
    }

    public void mediaError() {
        counters.add(MEDIA_ERRORS, 1);
    }

    public long readCommands() { return counters.sum(READ_COMMANDS); }
    public long writeCommands() { return counters.sum(WRITE_COMMANDS); }
    public long bytesRead() { return counters.sum(BYTES_READ); }
    public long bytesWritten() { return counters.sum(BYTES_WRITTEN); }
    public long mediaErrors() { return counters.sum(MEDIA_ERRORS); }
}

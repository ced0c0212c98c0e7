package dev.nvmf.target.core;

import dev.nvmf.target.backend.MemoryMedium;

import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.lang.foreign.MemorySegment;

/**
 * One NVMe command in flight, seen from the boundary between a transport and the core.
 *
 * <p>Owned and pooled by the transport queue (one per command context, preallocated at connect), reused for
 * every command: the core keeps no reference to it after {@link QueueTransport#complete}. Each request carries the
 * core's {@link CommandContext}, created with it, so a command allocates nothing in the core either. The transport
 * sets the command and response views and the data buffer; the core reads the command, moves data through
 * {@link #data()}, and writes the whole 16-byte completion queue entry into {@link #response()} before it
 * completes the request.
 *
 * <p>The life of a request (see docs/architecture.md):
 * <ol>
 *   <li>The transport binds the command (64-byte SQE) and the response buffer, sets {@link #transportStatus}
 *       if it could not map the SGL, and calls {@link CommandQueue#begin}.</li>
 *   <li>If {@code begin} returns true the core has parsed the command, chosen its handler and set
 *       {@link #dataDirection()}; the transport brings host data in (in-capsule slice or RDMA READ) or prepares a
 *       buffer for data out, sets {@link #data(MemorySegment, int)}, and calls {@link CommandQueue#execute}.</li>
 *   <li>The core (maybe asynchronously, through a backend) finishes and calls {@link QueueTransport#complete}
 *       exactly once, from any thread. For controller-to-host commands with a success status the transport then
 *       sends {@link #dataLength()} bytes of {@link #data()} to the host before the response.</li>
 * </ol>
 */
public final class NvmeRequest {
    /** No data moves. */
    public static final int DIRECTION_NONE = 0;
    /** Host-to-controller data (a write): the transport fetches it before execute. */
    public static final int DIRECTION_HOST_TO_CONTROLLER = 1;
    /** Controller-to-host data (a read): the transport sends it after completion. */
    public static final int DIRECTION_CONTROLLER_TO_HOST = 2;

    private final int tag;
    private MemorySegment command = MemorySegment.NULL;
    private MemorySegment response = MemorySegment.NULL;
    private MemorySegment data = MemorySegment.NULL;
    private int dataLength;
    private int dataDirection;
    private int transportStatus;
    private MemoryMedium medium;
    private long mediumOffset;
    private long mediumLength;
    private long startNanos;
    private NanoClock clock = SystemNanoClock.INSTANCE;
    /** The core's half of the command (kernel: {@code struct nvmet_req}), created with the pooled request. */
    private final CommandContext context = new CommandContext();

    /** @param tag the transport's index of this request in its pool (for its own bookkeeping) */
    public NvmeRequest(int tag) {
        this.tag = tag;
        this.context.request = this;
    }

    public int tag() { return tag; }

    /** Binds the 64-byte submission queue entry and the 16-byte response buffer for a new command. */
    public NvmeRequest bind(MemorySegment command, MemorySegment response) {
        this.command = command;
        this.response = response;
        this.data = MemorySegment.NULL;
        this.dataLength = 0;
        this.dataDirection = DIRECTION_NONE;
        this.transportStatus = 0;
        this.medium = null;
        this.mediumOffset = 0;
        this.mediumLength = 0;
        return this;
    }

    /** The 64-byte submission queue entry. */
    public MemorySegment command() { return command; }

    /** The 16-byte completion queue entry the core writes. */
    public MemorySegment response() { return response; }

    /** The data buffer described by the command's SGL (in-capsule slice or registered buffer), or NULL. */
    public MemorySegment data() { return data; }

    /** The data length the SGL describes, in bytes. */
    public int dataLength() { return dataLength; }

    public NvmeRequest data(MemorySegment data, int length) {
        this.data = data;
        this.dataLength = length;
        return this;
    }

    /** One of the DIRECTION_ constants; set by the core in {@link CommandQueue#begin}. */
    public int dataDirection() { return dataDirection; }

    public void dataDirection(int direction) { this.dataDirection = direction; }

    /**
     * A status the transport found before the core saw the command (e.g. SGL Descriptor Type Invalid), in the
     * CQE status-field format (SC in bits 0..7, SCT in bits 8..10, DNR bit 14, without the phase bit); 0 = none.
     * The core completes such a request with that status without executing it.
     */
    public int transportStatus() { return transportStatus; }

    public void transportStatus(int status) { this.transportStatus = status; }

    /**
     * For a Read or Write of a namespace whose medium is native memory (set by the core in {@link
     * CommandQueue#begin}): that medium and the byte offset of the command's first block in it, or null. A transport
     * that has the medium registered may then move exactly the command's blocks (its length, checked against the
     * namespace's size by the core) straight between the host and {@code medium.segment()} at that offset, and set
     * {@code medium.segment()} as {@link #data}: the backend copies nothing (zero copy). Otherwise it ignores it.
     */
    public MemoryMedium medium() { return medium; }

    /** The byte offset in {@link #medium()} of the command's data. */
    public long mediumOffset() { return mediumOffset; }

    /** The command's bytes in {@link #medium()}: its blocks, whatever the host's SGL says. */
    public long mediumLength() { return mediumLength; }

    public void medium(MemoryMedium medium, long offset, long length) {
        this.medium = medium;
        this.mediumOffset = offset;
        this.mediumLength = length;
    }

    /** When the transport received the command (for latency metrics), on {@link #clock()}; the transport sets it. */
    public long startNanos() { return startNanos; }

    /** The command was received at {@code nanos} on the system clock. */
    public void startNanos(long nanos) {
        this.clock = SystemNanoClock.INSTANCE;
        this.startNanos = nanos;
    }

    /**
     * The command was received now, on {@code clock}: the transport's (an RDMA poller's reads the time once per pass),
     * which also times its completion ({@link #elapsedNanos()}).
     */
    public void start(NanoClock clock) {
        this.clock = clock;
        this.startNanos = clock.nanoTime();
    }

    /** Nanoseconds since the command was received (0 when no start was set, never negative). */
    public long elapsedNanos() {
        long start = startNanos;
        return start == 0 ? 0 : Math.max(0, clock.nanoTime() - start);
    }

    /** The core's state of the command (the core's only; a transport never sees it). */
    CommandContext context() { return context; }
}

/**
 * The RDMA API the target codes against: devices, protection domains, memory regions, completion queues,
 * queue pairs, the RDMA connection manager, and flyweights over the native work-request structures.
 *
 * <p>Two providers implement it: {@code dev.nvmf.verbs.ffm} (libibverbs and librdmacm through
 * {@code java.lang.foreign}) and {@code dev.nvmf.verbs.soft} (an in-process fabric with strict RC semantics,
 * fault injection and deterministic stepping; test code, shipped only in this module's test-jar). Code above this package must not know which one it runs on.
 *
 * <p>Rules of the API:
 * <ul>
 *   <li>Control-path calls (open, register, create, connect, accept...) throw {@link VerbsException} naming
 *       the call, the errno and its text.</li>
 *   <li>Hot-path calls ({@link QueuePair#postSend}, {@link QueuePair#postRecv}, {@link CompletionQueue#poll})
 *       return codes (0 or an errno value; a count or a negative value) and allocate nothing.</li>
 *   <li>Work requests, scatter/gather lists and work completions are native structures with the exact
 *       rdma-core x86_64 layout ({@link SendWorkRequest}, {@link RecvWorkRequest}, {@link ScatterGatherEntry},
 *       {@link WorkCompletion}); both providers read the same bytes. Callers build them once and patch fields
 *       in place per I/O.</li>
 *   <li>Posting to a queue pair in the error state is not a synchronous failure: the work request completes
 *       with {@link WcStatus#WR_FLUSH_ERR} (see shared/seeds/000).</li>
 * </ul>
 *
 * <p>Faults, as the providers report them (what a transport's teardown builds on):
 * <ul>
 *   <li>A failed post of a chain is partial ({@link QueuePair#postedBeforeFailure()}): the requests before
 *       {@code bad_wr} are posted and will complete (or flush), so what they use stays allocated until their
 *       completions; {@code bad_wr} and the requests after it were not posted and never complete.</li>
 *   <li>The hot path reports failures as codes, never exceptions: a negative {@link CompletionQueue#poll} is a CQ
 *       error, a negative {@link CompletionChannel#nextEvent} a failed channel. Both mean the device (or the CQ)
 *       will deliver nothing more, so a drain waiting on them must end by a time bound and destroy the QP.</li>
 *   <li>{@link AsyncEvent}s say what they are about ({@link AsyncEvent.Type#affiliation()}): a QP by number (unique
 *       per device only: key by device and number), a CQ, a port (PORT_ERR, PORT_ACTIVE, GID_CHANGE... with its
 *       number) or the whole device (DEVICE_FATAL). DEVICE_REMOVAL arrives on the CM channel, for every id on the
 *       device (listeners bound to its address included, wildcard listeners not); the consumer must then destroy
 *       everything on the device, QPs first. A device that comes back is a new {@link Device} object.</li>
 *   <li>A control thread waits for CM events, asynchronous events and its deadlines together in an
 *       {@link EventWaiter} (epoll on both providers): no wake-ups while idle.</li>
 *   <li>Completions after the error transition are provider-specific: work queued before the transition flushes,
 *       in order per queue; whether a send posted after it completes is not guaranteed (Soft-RoCE on Linux 6.1
 *       never completes it), so a drain counts what it posted rather than posting a marker.</li>
 * </ul>
 */
package dev.nvmf.verbs;

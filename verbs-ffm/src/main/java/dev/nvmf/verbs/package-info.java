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
 *       with {@link WcStatus#WR_FLUSH_ERR} (thread "drain_sq and drain_rq").</li>
 * </ul>
 */
package dev.nvmf.verbs;

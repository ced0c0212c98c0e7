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
 *       in order per queue (the two queues of a QP are not ordered against each other); whether work posted after
 *       it ever completes is not guaranteed, so a drain counts what it posted rather than posting a marker, and
 *       posts nothing once its queue has left the live state.</li>
 * </ul>
 *
 * <p>What the lab saw on Soft-RoCE (rxe, Debian's Linux 6.1, rdma-core 44; {@code VerbsFaultScenarioLabTest}):
 * <ul>
 *   <li>Both devices numbered their first QP 17: QP numbers repeat across devices.</li>
 *   <li>A QP granted max_send_wr 16 and max_recv_wr 16 took 31 WRs on each queue (rxe rounds its rings up): a
 *       chain of 132 WRITEs failed with ENOMEM at the 32nd, bad_wr named it, and exactly the 31 before it
 *       completed. A post beyond the reported capacity is therefore not a reliable error: the send budget is the
 *       consumer's own.</li>
 *   <li>An RDMA WRITE through a wrong rkey completed with REM_ACCESS_ERR, vendor_err 0, and no asynchronous event
 *       on either side; the requester's and the responder's QPs went to error and every queued receive flushed in
 *       order.</li>
 *   <li>After the error transition (by that error completion, or by ibv_modify_qp to ERR with the peer alive) a
 *       SEND posted later was flushed, but a RECV posted later never completed (watched for 3 s). An earlier lab run of
 *       the transport's drain saw the opposite for sends (a SEND posted after the transition never completed), which
 *       this scenario did not reproduce; the soft provider models both ({@code sendsPostedInErrorVanish},
 *       {@code receivesPostedInErrorVanish}).</li>
 *   <li>A disconnect from one side reports DISCONNECTED to the other at once, and to the side that disconnected
 *       only when the other answers with its own rdma_disconnect (or after the CM's DREQ timeout).</li>
 *   <li>{@code rdma link delete rxe0} under a live connection: DEVICE_REMOVAL for the listener bound to rxe0's
 *       address and for the connection's id; no asynchronous event; the QP stayed RTS, poll_cq returned 0, a post
 *       was accepted; the host's side got DISCONNECTED. rxe cannot take user resources away (no disassociate), so the
 *       removal waits until the consumer has destroyed everything on the device and librdmacm has let go of its
 *       own context, which it does when it rescans the device list ({@code RdmaProvider.listDevices()} on the ffm
 *       provider): without that listing the removal never finished; with it, 6.9 s after it started (TCG guest).
 *       {@code rdma link add} brought rxe0 back: a listener bound to its address again and a new connection arrived
 *       on a new {@link Device} object. Adding an address to the netdev raised GID_CHANGE on port 1.</li>
 * </ul>
 */
package dev.nvmf.verbs;

/**
 * The soft provider: an in-process RDMA fabric ({@link dev.nvmf.verbs.soft.SoftFabric}) implementing the
 * provider-neutral API with strict reliable-connected semantics, for tests of everything above {@code dev.nvmf.verbs}.
 *
 * <p>Typical use:
 * <pre>{@code
 * SoftFabric fabric = SoftFabric.manual();            // or automatic() for code with poll loops and threads
 * fabric.addDevice("soft0", "10.0.0.1");              // the target's device
 * fabric.addDevice("soft1", "10.0.0.2");              // the host's device
 * ... code under test uses fabric as its RdmaProvider ...
 * fabric.deliverAll();                                 // manual: run everything due now (step() runs one thing)
 * fabric.advanceTime(Duration.ofSeconds(3));           // manual: fire timers (RNR, retries, CM timeouts, TIMEWAIT)
 * fabric.faults().dropNext(CmMessage.RTU);             // scripted faults
 * assertTrue(fabric.resources().nothingLeaked());      // like `rdma resource show` after teardown
 * }</pre>
 *
 * <p>What is modelled, each pinned by a test in this package's test folder: the QP state machine and the CM's
 * transitions; flush on error, in order, behind finished work; send/receive queue depths (unsignaled WRs hold their
 * slot until a later signaled completion is polled) and CQ overrun; memory keys, bounds and access flags with the
 * right local/remote error statuses; type-2 memory windows (BIND_MW, access through the binding QP only) and
 * SEND_WITH_INV / LOCAL_INV of their keys, while a registered region's keys cannot be invalidated (as on rxe); receiver-not-ready with finite and infinite retries; RC ordering;
 * IB CM private-data padding (REQ 56, REP 196, REJ 148 bytes), rejects, lost or late CM messages, COMM_EST and
 * rdma_notify, disconnects from either side, TIMEWAIT_EXIT, device removal; resource tracking; blocking calls that
 * honour wakeup() and never spin. The data path allocates nothing once warm.
 *
 * <p>Faults ({@link dev.nvmf.verbs.soft.SoftFaults}, each with its test): refusing the k-th WR of a send or receive
 * chain (bad_wr); completions with a chosen status, delayed or lost; a QP whose host vanished; a device that dies
 * silently or after one DEVICE_FATAL or DEVICE_REMOVAL (nothing completes, not even flushes; posts are accepted and
 * never complete); a link that goes down and up (PORT_ERR, PORT_ACTIVE); hot-remove and return of a device
 * ({@link dev.nvmf.verbs.soft.SoftFabric#removeDevice}, {@link dev.nvmf.verbs.soft.SoftFabric#returnDevice}); a
 * completion channel whose get-event fails and a CQ that fails (poll &lt; 0, CQ_ERR); sends posted in the error
 * state that never complete (rxe on Linux 6.1); CM messages lost or late. QP numbers are per device, and
 * {@link dev.nvmf.verbs.soft.SoftFabric#nextQpNumber} makes two devices hand out the same one. The RDMA READ
 * depth negotiated by the CM is tracked per QP; {@link dev.nvmf.verbs.soft.SoftFabric#enforceReadDepth} makes a
 * READ beyond it fail as IB does (NAK invalid request). Every channel and device keeps a real eventfd readable
 * while it has events, so the same epoll waiter serves both providers.
 *
 * <p>Approximations: one WR executes per step (no pipelining inside a send queue); the READ depth is enforced only
 * when asked, and then on the consumer (a real requester holds READs beyond its own depth back instead);
 * the statuses of a failed remote invalidation follow rxe (Linux 6.1: the
 * receive fails with REM_INV_REQ_ERR and its QP goes to error, the sender's WR succeeds); no type-1 windows; no SRQ, atomics, immediate data or UD.
 */
package dev.nvmf.verbs.soft;

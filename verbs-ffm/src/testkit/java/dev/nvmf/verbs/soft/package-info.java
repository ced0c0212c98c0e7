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
 * <p>Approximations: one WR executes per step (no pipelining inside a send queue); RDMA READ depth is not limited;
 * the statuses of a failed remote invalidation follow rxe (Linux 6.1: the
 * receive fails with REM_INV_REQ_ERR and its QP goes to error, the sender's WR succeeds); no type-1 windows; no SRQ, atomics, immediate data or UD.
 */
package dev.nvmf.verbs.soft;

package dev.nvmf.tests.lab;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.verbs.ffm.FfmProvider;

import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The target as the lab runs it in the guest, before the operators' `serve` exists: one RDMA port, one
 * subsystem with a RAM namespace, any host allowed; rdma-core through FFM. Prints "LAB-TARGET: READY" once
 * listening and "LAB-TARGET: STOPPED" after SIGTERM has drained every queue.
 *
 * <p>Arguments: ADDRESS PORT NQN SIZE_MIB [IN_CAPSULE_BYTES [POLLERS [REMOTE_INVALIDATION]]].
 */
public final class LabTargetMain {
    private LabTargetMain() {}

    public static void main(String[] args) throws Exception {
        String address = args.length > 0 ? args[0] : "10.77.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 4420;
        String nqn = args.length > 2 ? args[2] : "nqn.2024-01.dev.nvmf:lab";
        long sizeMib = args.length > 3 ? Long.parseLong(args[3]) : 256;
        int icd = args.length > 4 ? Integer.parseInt(args[4]) : RdmaPortConfig.DEFAULT_IN_CAPSULE_DATA_SIZE;
        int pollers = args.length > 5 ? Integer.parseInt(args[5]) : 1;
        boolean remoteInvalidation = args.length <= 6 || Boolean.parseBoolean(args[6]);

        // MDTS 5 = 128 KiB: no larger than the transport's max_io_size.
        TargetOptions d = TargetOptions.defaults();
        TargetOptions options = new TargetOptions(5, d.adminQueueDepth(), d.keepAliveGranularity(),
                d.discoveryKatoMillis(), d.asyncEventLimit(), d.errorLogEntries(), d.capTimeout(), d.version());
        NvmeTarget target = new NvmeTarget(options, org.agrona.concurrent.SystemNanoClock.INSTANCE);
        int maxDepth = RdmaPortConfig.DEFAULT_MAX_QUEUE_DEPTH;
        target.addPort(new Port(1, DiscoveryLog.TRTYPE_RDMA,
                address.contains(":") ? DiscoveryLog.ADRFAM_IPV6 : DiscoveryLog.ADRFAM_IPV4, address,
                Integer.toString(port), icd, maxDepth));
        Subsystem s = target.addSubsystem(SubsystemConfig.of(nqn, "LAB0001").withAllowAnyHost(true));
        s.addNamespace(NamespaceConfig.of(1, 512), new RamBackend(sizeMib << 20));
        target.exposeSubsystem(1, nqn);

        RdmaPortConfig portConfig = new RdmaPortConfig(1, address, port, icd, maxDepth,
                RdmaPortConfig.DEFAULT_MAX_ADMIN_QUEUE_DEPTH);
        RdmaTransportConfig config = RdmaTransportConfig.of(List.of(portConfig)).withPollers(pollers)
                .withRemoteInvalidation(remoteInvalidation).withMaxIoSize(options.maxTransferBytes());
        FfmProvider provider = new FfmProvider();
        RdmaTransport transport = new RdmaTransport(provider, config, target);
        transport.start();

        CountDownLatch stopped = new CountDownLatch(1);
        Thread timers = new Thread(() -> {
            while (stopped.getCount() > 0) {
                target.checkTimers(System.nanoTime());
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "lab-timers");
        timers.setDaemon(true);
        timers.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("LAB-TARGET: STOPPING (open queues " + transport.openQueues() + ")");
            transport.stop(20_000);
            RdmaMetrics m = transport.metrics();
            System.out.println("LAB-TARGET: metrics commands=" + m.commandsReceived.sum() + " responses="
                    + m.responsesSent.sum() + " inCapsule=" + m.inCapsuleCommands.sum() + " reads="
                    + m.rdmaReads.sum() + " writes=" + m.rdmaWrites.sum() + " remoteInv="
                    + m.remoteInvalidations.sum() + " flushes=" + m.flushCompletions.sum() + " budgetWaits=" + m.sendBudgetWaits.sum() + " bufferWaits="
                    + m.bufferWaits.sum() + " early=" + m.earlyCapsules.sum() + " accepted="
                    + m.queuesAccepted.sum() + " closed=" + m.queuesClosed.sum() + " open=" + m.queuesOpen.get());
            System.out.println("LAB-TARGET: STOPPED");
            System.out.flush();
            stopped.countDown();
        }, "lab-shutdown"));
        System.out.println("LAB-TARGET: READY " + transport.listenAddresses());
        System.out.flush();
        stopped.await();
    }
}

package dev.nvmf.target.daemon;

import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.service.TargetRuntime;
import dev.nvmf.target.service.TargetRuntimeFactory;
import dev.nvmf.verbs.ffm.FfmProvider;

/**
 * The production runtime, found by {@code serve} through {@link java.util.ServiceLoader}: {@link DaemonRuntime} on
 * rdma-core through FFM ({@link FfmProvider}). {@code NVMF_TARGET_REMOTE_INVALIDATION=0} in the environment turns
 * SEND_WITH_INVALIDATE off (a diagnostic switch for hosts or devices that mishandle it).
 */
public final class DaemonRuntimeFactory implements TargetRuntimeFactory {
    @Override
    public String name() {
        return "rdma";
    }

    @Override
    public TargetRuntime create(TargetMetrics metrics) {
        boolean invalidate = !"0".equals(System.getenv("NVMF_TARGET_REMOTE_INVALIDATION"));
        DaemonRuntime.Options o = DaemonRuntime.Options.of(new FfmProvider());
        return new DaemonRuntime(new DaemonRuntime.Options(o.provider(), invalidate,
                o.backendFlushWait()), metrics);
    }
}

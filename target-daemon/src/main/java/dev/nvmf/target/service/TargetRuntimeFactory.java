package dev.nvmf.target.service;

import dev.nvmf.target.metrics.TargetMetrics;

/**
 * Found with {@link java.util.ServiceLoader} (META-INF/services/dev.nvmf.target.service.TargetRuntimeFactory), so
 * the integration step plugs the real target in without the CLI depending on it.
 */
public interface TargetRuntimeFactory {
    /** A short name for {@code serve --runtime NAME}. */
    String name();

    TargetRuntime create(TargetMetrics metrics);
}

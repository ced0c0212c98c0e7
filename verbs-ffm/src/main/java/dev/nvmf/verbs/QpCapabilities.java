package dev.nvmf.verbs;

/**
 * {@code struct ibv_qp_cap}: what a QP is created with and what it was granted.
 */
public record QpCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {}

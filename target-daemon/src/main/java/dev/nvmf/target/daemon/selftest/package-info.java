/**
 * {@code nvmf-target selftest}: the provider scenario and an NVMe connect with I/O through the daemon's own
 * transport, over one RDMA device's loopback, with a report of what the device can and cannot do
 * ({@link dev.nvmf.target.daemon.selftest.Selftest}). Runs only on demand; nothing in {@code serve} uses it.
 */
package dev.nvmf.target.daemon.selftest;

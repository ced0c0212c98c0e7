/**
 * Namespace storage backends: the bytes behind an NVMe namespace (kernel: drivers/nvme/target/io-cmd-*.c).
 *
 * <ul>
 *   <li>{@link dev.nvmf.target.backend.BlockBackend} / {@link dev.nvmf.target.backend.BackendCallback}: the contract
 *       the core calls from poller threads; byte offsets, range checks done by the core.</li>
 *   <li>{@link dev.nvmf.target.backend.RamBackend}: native memory, completes inline.</li>
 *   <li>{@link dev.nvmf.target.backend.FileBackend}, {@link dev.nvmf.target.backend.BlockDeviceBackend}: libc through
 *       FFM on a small worker pool ({@link dev.nvmf.target.backend.AsyncFdBackend}); callbacks on worker threads.
 *       When all {@code maxInFlight} descriptors are busy a submission completes inline with {@code -EAGAIN}.</li>
 *   <li>{@link dev.nvmf.target.backend.rbd.RbdBackend}: a Ceph RBD image through librbd's asynchronous API; callbacks
 *       on librbd's thread; the same {@code -EAGAIN} rule for its operation slots (see docs/rbd.md).</li>
 *   <li>{@link dev.nvmf.target.backend.BlockBackends#open} with a {@link dev.nvmf.target.backend.BackendSpec}: the
 *       factory for the config layer; failures are {@link dev.nvmf.target.backend.BackendOpenException}s naming the
 *       path (for RBD, {@code rbd:pool/image}) and errno.</li>
 *   <li>Results are 0 or a negative errno ({@link dev.nvmf.verbs.Errno} lists which mean what); nothing
 *       throws into the caller on the I/O path, and nothing allocates per operation once warm.</li>
 *   <li>A namespace LBA size must be a multiple of {@link dev.nvmf.target.backend.AsyncFdBackend#logicalBlockSize()}
 *       (the device's BLKSSZGET under O_DIRECT; 1 for files and RAM).</li>
 * </ul>
 */
package dev.nvmf.target.backend;

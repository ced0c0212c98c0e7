/**
 * Ceph RBD namespaces: librbd and librados (Ceph 16.2 C API) through FFM. See docs/rbd.md.
 *
 * <ul>
 *   <li>{@link dev.nvmf.target.backend.rbd.RbdBackend}: the {@link dev.nvmf.target.backend.BlockBackend} over one
 *       image; {@code rbd_aio_*} with pooled operation slots and one completion upcall, callbacks on librbd's
 *       thread; resizes reported to a {@link dev.nvmf.target.backend.rbd.RbdBackend.CapacityListener}.</li>
 *   <li>{@link dev.nvmf.target.backend.rbd.RbdSpec}: pool, image, namespace, snapshot, conf, cephx id, keyring,
 *       timeouts, block size; validation messages name the YAML key.</li>
 *   <li>{@code RadosConnection}: connect (bounded by the connect timeout) and the pool's I/O context;
 *       {@code ImageSizeMonitor}: header watch plus polling; {@link dev.nvmf.target.backend.rbd.RbdOpenException}:
 *       what failed at open, with errno, never a key.</li>
 *   <li>{@code CephLibraries}, {@code CephNative}, {@link dev.nvmf.target.backend.rbd.RbdLayout}: the libraries by
 *       soname, the downcalls, and every size/offset/constant used (checked against the headers by
 *       {@code RbdLayoutTest}).</li>
 * </ul>
 */
package dev.nvmf.target.backend.rbd;

/**
 * The NVMe and NVMe-oF specifications' vocabulary: opcodes ({@link dev.nvmf.target.nvme.Opcodes}), status codes
 * ({@link dev.nvmf.target.nvme.Status}), flyweights over native memory for the submission and completion queue
 * entries and SGL descriptors ({@link dev.nvmf.target.nvme.SubmissionQueueEntry},
 * {@link dev.nvmf.target.nvme.CompletionQueueEntry}, {@link dev.nvmf.target.nvme.SglDescriptor}), and the byte
 * layouts of the Fabrics commands, properties, Identify data, log pages and features, as named offset constants.
 *
 * <p>No behaviour lives here: the controller core ({@code dev.nvmf.target.core}) and the transport read and write
 * these structures. All integers are little-endian ({@link dev.nvmf.target.nvme.Le}).
 */
package dev.nvmf.target.nvme;

package dev.nvmf.target.backend.rbd;

import dev.nvmf.verbs.ffm.CExpr;

/**
 * Every size, offset and constant of the librados / librbd C API (Ceph 16.2: {@code rados/librados.h},
 * {@code rbd/librbd.h}) that the binding reads, writes or passes, for x86_64. Each names the C expression it mirrors;
 * {@code RbdLayoutTest} compiles them against the installed headers and compares.
 *
 * <p>The handles ({@code rados_t}, {@code rados_ioctx_t}, {@code rbd_image_t}, {@code rbd_completion_t}) are
 * {@code void *}: the binding passes them as 64-bit integers, which the x86_64 and aarch64 calling conventions pass
 * exactly like pointers.
 */
public final class RbdLayout {
    private RbdLayout() {
    }

    @CExpr("sizeof(void *)") public static final int POINTER_SIZE = 8;
    @CExpr("sizeof(rbd_completion_t)") public static final int RBD_COMPLETION_SIZE = 8;
    @CExpr("sizeof(uint64_t)") public static final int UINT64_SIZE = 8;
    @CExpr("sizeof(size_t)") public static final int SIZE_T_SIZE = 8;

    // ---- rbd_image_info_t (rbd_stat) ----
    @CExpr("sizeof(rbd_image_info_t)") public static final int RBD_IMAGE_INFO_SIZE = 160;
    @CExpr("_Alignof(rbd_image_info_t)") public static final int RBD_IMAGE_INFO_ALIGNMENT = 8;
    @CExpr("offsetof(rbd_image_info_t, size)") public static final int RBD_IMAGE_INFO_SIZE_OFFSET = 0;
    @CExpr("offsetof(rbd_image_info_t, obj_size)") public static final int RBD_IMAGE_INFO_OBJ_SIZE = 8;
    @CExpr("offsetof(rbd_image_info_t, num_objs)") public static final int RBD_IMAGE_INFO_NUM_OBJS = 16;
    @CExpr("offsetof(rbd_image_info_t, order)") public static final int RBD_IMAGE_INFO_ORDER = 24;

    // ---- rbd_aio_write_zeroes(..., zero_flags, op_flags) ----
    /** zero_flags 0: the range reads back as zeroes and may be deallocated (not thick-provisioned). */
    @CExpr("0") public static final int RBD_WRITE_ZEROES_FLAGS_NONE = 0;
    /** The flag we do not pass: it would allocate the zeroed extent (RBD_WRITE_ZEROES_FLAG_THICK_PROVISION). */
    @CExpr("RBD_WRITE_ZEROES_FLAG_THICK_PROVISION") public static final int RBD_WRITE_ZEROES_FLAG_THICK_PROVISION = 1;
    /** op_flags 0: no LIBRADOS_OP_FLAG_FADVISE_* hint. */
    @CExpr("0") public static final int LIBRADOS_OP_FLAGS_NONE = 0;

    // ---- image features (rbd_get_features) ----
    /** Writers take the image's lock in turn (see docs/rbd.md: several daemons over one image). */
    @CExpr("RBD_FEATURE_EXCLUSIVE_LOCK") public static final long RBD_FEATURE_EXCLUSIVE_LOCK = 4;

    // ---- the versions this binding was written against ----
    /** librbd's major version: 1 since its start; a change would be an incompatible ABI. */
    @CExpr("LIBRBD_VER_MAJOR") public static final int LIBRBD_VER_MAJOR = 1;
    /** librados' major version (3 in Ceph 16.2). */
    @CExpr("LIBRADOS_VER_MAJOR") public static final int LIBRADOS_VER_MAJOR = 3;
}

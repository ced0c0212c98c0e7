package dev.nvmf.target.rdma.memory;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.VerbsException;

/**
 * What a failed {@code ibv_dereg_mr} means for the memory under the region. In general the device may still reach
 * it, so the memory is leaked on purpose. One answer is certain: ENOENT, the kernel knows no region by that handle.
 * Our handles are destroyed only by us, so the kernel destroyed the region itself: a device being removed
 * ({@code rdma link delete}, a driver unbind) has its user contexts' objects destroyed by the kernel (drivers/
 * infiniband/core/uverbs_main.c, ib_uverbs_remove_one, ib_uverbs_free_hw_resources), which unpins the pages, and
 * every later call on them fails. The lab sees exactly this after a hot-remove of rxe0. Such memory is freed.
 */
final class Deregistration {
    private Deregistration() { }

    /**
     * Whether {@code failure} of ibv_dereg_mr (or of ibv_dealloc_pd, which the kernel destroys with the regions) says
     * the object no longer exists in the kernel.
     */
    static boolean alreadyDestroyedByTheKernel(RuntimeException failure) {
        return failure instanceof VerbsException v && v.errno() == Errno.ENOENT;
    }
}

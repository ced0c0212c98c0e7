package dev.nvmf.verbs.ffm;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The C expression (over the installed rdma-core and libc headers) whose value a {@link NativeLayout} constant
 * must equal, e.g. {@code offsetof(struct ibv_qp, qp_num)}. The layout test compiles every one of them with gcc
 * and fails on any difference, so a header change cannot silently corrupt memory.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface CExpr {
    String value();
}

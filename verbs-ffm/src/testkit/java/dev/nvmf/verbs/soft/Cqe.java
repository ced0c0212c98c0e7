package dev.nvmf.verbs.soft;

/** A completion on its way to, or sitting in, a CQ; pooled by the fabric. */
final class Cqe {
    long wrId;
    int status;
    int opcode;
    int byteLen;
    int invalidatedRkey;
    int qpNum;
    int wcFlags;
    boolean solicited;
    /** The QP and queue whose slot this completion retires when polled (null once the QP is destroyed). */
    SoftQueuePair qp;
    boolean sendQueue;
    long index;
    long due;
}

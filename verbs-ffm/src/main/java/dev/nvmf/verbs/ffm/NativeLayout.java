package dev.nvmf.verbs.ffm;

/**
 * Every offset, size and enum value of rdma-core (libibverbs, librdmacm) and libc that the ffm provider reads or
 * writes, for x86_64 / rdma-core 44. Each constant names the C expression it mirrors ({@link CExpr});
 * {@code NativeLayoutTest} compiles those expressions against the installed headers and compares.
 *
 * <p>The work-request, scatter/gather and work-completion layouts live in the provider-neutral flyweights
 * ({@code dev.nvmf.verbs.SendWorkRequest} and friends) and are checked by the same test.
 */
public final class NativeLayout {
    private NativeLayout() {}

    @CExpr("sizeof(void *)") public static final int POINTER_SIZE = 8;

    // ---- struct ibv_context: the legacy ops table is ABI-frozen (verbs.h, struct ibv_context_ops) ----
    @CExpr("sizeof(struct ibv_context)") public static final int IBV_CONTEXT_SIZE = 328;
    @CExpr("offsetof(struct ibv_context, device)") public static final int IBV_CONTEXT_DEVICE = 0;
    @CExpr("offsetof(struct ibv_context, ops)") public static final int IBV_CONTEXT_OPS = 8;
    @CExpr("offsetof(struct ibv_context, async_fd)") public static final int IBV_CONTEXT_ASYNC_FD = 268;
    @CExpr("offsetof(struct ibv_context, num_comp_vectors)") public static final int IBV_CONTEXT_NUM_COMP_VECTORS = 272;
    /** ops.poll_cq, from the start of the context. */
    /** ops.alloc_mw / ops.dealloc_mw: ibv_alloc_mw and ibv_dealloc_mw are static inline over them (no symbol). */
    @CExpr("offsetof(struct ibv_context, ops.alloc_mw)") public static final int IBV_CONTEXT_OPS_ALLOC_MW = 64;
    @CExpr("offsetof(struct ibv_context, ops.dealloc_mw)") public static final int IBV_CONTEXT_OPS_DEALLOC_MW = 80;
    @CExpr("offsetof(struct ibv_context, ops.poll_cq)") public static final int IBV_CONTEXT_OPS_POLL_CQ = 96;
    @CExpr("offsetof(struct ibv_context, ops.req_notify_cq)") public static final int IBV_CONTEXT_OPS_REQ_NOTIFY_CQ = 104;
    @CExpr("offsetof(struct ibv_context, ops.post_send)") public static final int IBV_CONTEXT_OPS_POST_SEND = 208;
    @CExpr("offsetof(struct ibv_context, ops.post_recv)") public static final int IBV_CONTEXT_OPS_POST_RECV = 216;
    /** ops.post_srq_recv: ibv_post_srq_recv is static inline over it (verbs.h). */
    @CExpr("offsetof(struct ibv_context, ops.post_srq_recv)") public static final int IBV_CONTEXT_OPS_POST_SRQ_RECV = 168;

    // ---- struct ibv_device_attr ----
    @CExpr("sizeof(struct ibv_device_attr)") public static final int IBV_DEVICE_ATTR_SIZE = 232;
    @CExpr("offsetof(struct ibv_device_attr, node_guid)") public static final int IBV_DEVICE_ATTR_NODE_GUID = 64;
    @CExpr("offsetof(struct ibv_device_attr, max_mr_size)") public static final int IBV_DEVICE_ATTR_MAX_MR_SIZE = 80;
    @CExpr("offsetof(struct ibv_device_attr, max_qp)") public static final int IBV_DEVICE_ATTR_MAX_QP = 108;
    @CExpr("offsetof(struct ibv_device_attr, max_qp_wr)") public static final int IBV_DEVICE_ATTR_MAX_QP_WR = 112;
    @CExpr("offsetof(struct ibv_device_attr, device_cap_flags)") public static final int IBV_DEVICE_ATTR_DEVICE_CAP_FLAGS = 116;
    @CExpr("offsetof(struct ibv_device_attr, max_sge)") public static final int IBV_DEVICE_ATTR_MAX_SGE = 120;
    @CExpr("offsetof(struct ibv_device_attr, max_cq)") public static final int IBV_DEVICE_ATTR_MAX_CQ = 128;
    @CExpr("offsetof(struct ibv_device_attr, max_cqe)") public static final int IBV_DEVICE_ATTR_MAX_CQE = 132;
    @CExpr("offsetof(struct ibv_device_attr, max_mr)") public static final int IBV_DEVICE_ATTR_MAX_MR = 136;
    @CExpr("offsetof(struct ibv_device_attr, max_qp_rd_atom)") public static final int IBV_DEVICE_ATTR_MAX_QP_RD_ATOM = 144;
    @CExpr("offsetof(struct ibv_device_attr, max_qp_init_rd_atom)") public static final int IBV_DEVICE_ATTR_MAX_QP_INIT_RD_ATOM = 156;
    @CExpr("offsetof(struct ibv_device_attr, max_srq)") public static final int IBV_DEVICE_ATTR_MAX_SRQ = 212;
    @CExpr("offsetof(struct ibv_device_attr, max_srq_wr)") public static final int IBV_DEVICE_ATTR_MAX_SRQ_WR = 216;
    @CExpr("offsetof(struct ibv_device_attr, max_srq_sge)") public static final int IBV_DEVICE_ATTR_MAX_SRQ_SGE = 220;
    @CExpr("offsetof(struct ibv_device_attr, phys_port_cnt)") public static final int IBV_DEVICE_ATTR_PHYS_PORT_CNT = 227;

    // ---- struct ibv_port_attr (the exported ibv_query_port fills the compat prefix; we zero the whole) ----
    @CExpr("sizeof(struct ibv_port_attr)") public static final int IBV_PORT_ATTR_SIZE = 52;
    @CExpr("offsetof(struct ibv_port_attr, state)") public static final int IBV_PORT_ATTR_STATE = 0;
    @CExpr("offsetof(struct ibv_port_attr, max_mtu)") public static final int IBV_PORT_ATTR_MAX_MTU = 4;
    @CExpr("offsetof(struct ibv_port_attr, active_mtu)") public static final int IBV_PORT_ATTR_ACTIVE_MTU = 8;
    @CExpr("offsetof(struct ibv_port_attr, gid_tbl_len)") public static final int IBV_PORT_ATTR_GID_TBL_LEN = 12;
    @CExpr("offsetof(struct ibv_port_attr, link_layer)") public static final int IBV_PORT_ATTR_LINK_LAYER = 46;
    @CExpr("sizeof(union ibv_gid)") public static final int IBV_GID_SIZE = 16;

    // ---- struct ibv_qp_init_attr ----
    @CExpr("sizeof(struct ibv_qp_init_attr)") public static final int IBV_QP_INIT_ATTR_SIZE = 64;
    @CExpr("offsetof(struct ibv_qp_init_attr, qp_context)") public static final int IBV_QP_INIT_ATTR_QP_CONTEXT = 0;
    @CExpr("offsetof(struct ibv_qp_init_attr, send_cq)") public static final int IBV_QP_INIT_ATTR_SEND_CQ = 8;
    @CExpr("offsetof(struct ibv_qp_init_attr, recv_cq)") public static final int IBV_QP_INIT_ATTR_RECV_CQ = 16;
    @CExpr("offsetof(struct ibv_qp_init_attr, srq)") public static final int IBV_QP_INIT_ATTR_SRQ = 24;
    @CExpr("offsetof(struct ibv_qp_init_attr, cap.max_send_wr)") public static final int IBV_QP_INIT_ATTR_MAX_SEND_WR = 32;
    @CExpr("offsetof(struct ibv_qp_init_attr, cap.max_recv_wr)") public static final int IBV_QP_INIT_ATTR_MAX_RECV_WR = 36;
    @CExpr("offsetof(struct ibv_qp_init_attr, cap.max_send_sge)") public static final int IBV_QP_INIT_ATTR_MAX_SEND_SGE = 40;
    @CExpr("offsetof(struct ibv_qp_init_attr, cap.max_recv_sge)") public static final int IBV_QP_INIT_ATTR_MAX_RECV_SGE = 44;
    @CExpr("offsetof(struct ibv_qp_init_attr, cap.max_inline_data)") public static final int IBV_QP_INIT_ATTR_MAX_INLINE_DATA = 48;
    @CExpr("offsetof(struct ibv_qp_init_attr, qp_type)") public static final int IBV_QP_INIT_ATTR_QP_TYPE = 52;
    @CExpr("offsetof(struct ibv_qp_init_attr, sq_sig_all)") public static final int IBV_QP_INIT_ATTR_SQ_SIG_ALL = 56;

    // ---- struct ibv_srq_init_attr / struct ibv_srq ----
    @CExpr("sizeof(struct ibv_srq_init_attr)") public static final int IBV_SRQ_INIT_ATTR_SIZE = 24;
    @CExpr("offsetof(struct ibv_srq_init_attr, attr.max_wr)") public static final int IBV_SRQ_INIT_ATTR_MAX_WR = 8;
    @CExpr("offsetof(struct ibv_srq_init_attr, attr.max_sge)") public static final int IBV_SRQ_INIT_ATTR_MAX_SGE = 12;
    @CExpr("offsetof(struct ibv_srq_init_attr, attr.srq_limit)") public static final int IBV_SRQ_INIT_ATTR_SRQ_LIMIT = 16;
    @CExpr("sizeof(struct ibv_srq)") public static final int IBV_SRQ_SIZE = 128;
    @CExpr("offsetof(struct ibv_srq, context)") public static final int IBV_SRQ_CONTEXT = 0;

    // ---- struct ibv_qp_attr ----
    @CExpr("sizeof(struct ibv_qp_attr)") public static final int IBV_QP_ATTR_SIZE = 144;
    @CExpr("offsetof(struct ibv_qp_attr, qp_state)") public static final int IBV_QP_ATTR_QP_STATE = 0;

    // ---- struct ibv_qp / ibv_cq / ibv_mr / ibv_comp_channel / ibv_async_event ----
    @CExpr("sizeof(struct ibv_qp)") public static final int IBV_QP_SIZE = 160;
    @CExpr("offsetof(struct ibv_qp, context)") public static final int IBV_QP_CONTEXT = 0;
    @CExpr("offsetof(struct ibv_qp, qp_num)") public static final int IBV_QP_QP_NUM = 52;
    @CExpr("sizeof(struct ibv_cq)") public static final int IBV_CQ_SIZE = 128;
    @CExpr("offsetof(struct ibv_cq, context)") public static final int IBV_CQ_CONTEXT = 0;
    @CExpr("offsetof(struct ibv_cq, cqe)") public static final int IBV_CQ_CQE = 28;
    @CExpr("sizeof(struct ibv_mr)") public static final int IBV_MR_SIZE = 48;
    @CExpr("offsetof(struct ibv_mr, addr)") public static final int IBV_MR_ADDR = 16;
    @CExpr("offsetof(struct ibv_mr, length)") public static final int IBV_MR_LENGTH = 24;
    @CExpr("offsetof(struct ibv_mr, lkey)") public static final int IBV_MR_LKEY = 36;
    @CExpr("offsetof(struct ibv_mr, rkey)") public static final int IBV_MR_RKEY = 40;
    @CExpr("offsetof(struct ibv_mr, pd)") public static final int IBV_MR_PD = 8;
    @CExpr("sizeof(struct ibv_mw)") public static final int IBV_MW_SIZE = 32;
    @CExpr("offsetof(struct ibv_mw, context)") public static final int IBV_MW_CONTEXT = 0;
    @CExpr("offsetof(struct ibv_mw, pd)") public static final int IBV_MW_PD = 8;
    /** The window's current key; rxe's post_send reads it as the key to check when a BIND_MW is posted. */
    @CExpr("offsetof(struct ibv_mw, rkey)") public static final int IBV_MW_RKEY = 16;
    @CExpr("offsetof(struct ibv_mw, type)") public static final int IBV_MW_TYPE = 24;
    @CExpr("sizeof(struct ibv_comp_channel)") public static final int IBV_COMP_CHANNEL_SIZE = 16;
    @CExpr("offsetof(struct ibv_comp_channel, fd)") public static final int IBV_COMP_CHANNEL_FD = 8;
    @CExpr("sizeof(struct ibv_async_event)") public static final int IBV_ASYNC_EVENT_SIZE = 16;
    @CExpr("offsetof(struct ibv_async_event, element)") public static final int IBV_ASYNC_EVENT_ELEMENT = 0;
    @CExpr("offsetof(struct ibv_async_event, event_type)") public static final int IBV_ASYNC_EVENT_EVENT_TYPE = 8;
    /** element.cq and element.port_num share the union at the start of the event. */
    @CExpr("offsetof(struct ibv_async_event, element.cq)") public static final int IBV_ASYNC_EVENT_ELEMENT_CQ = 0;
    @CExpr("offsetof(struct ibv_async_event, element.port_num)") public static final int IBV_ASYNC_EVENT_ELEMENT_PORT_NUM = 0;

    // ---- librdmacm ----
    @CExpr("sizeof(struct rdma_event_channel)") public static final int RDMA_EVENT_CHANNEL_SIZE = 4;
    @CExpr("offsetof(struct rdma_event_channel, fd)") public static final int RDMA_EVENT_CHANNEL_FD = 0;
    @CExpr("sizeof(struct rdma_cm_id)") public static final int RDMA_CM_ID_SIZE = 416;
    @CExpr("offsetof(struct rdma_cm_id, verbs)") public static final int RDMA_CM_ID_VERBS = 0;
    @CExpr("offsetof(struct rdma_cm_id, qp)") public static final int RDMA_CM_ID_QP = 24;
    @CExpr("offsetof(struct rdma_cm_id, route.addr.src_addr)") public static final int RDMA_CM_ID_SRC_ADDR = 32;
    @CExpr("offsetof(struct rdma_cm_id, route.addr.dst_addr)") public static final int RDMA_CM_ID_DST_ADDR = 160;
    @CExpr("offsetof(struct rdma_cm_id, port_num)") public static final int RDMA_CM_ID_PORT_NUM = 348;
    @CExpr("sizeof(struct rdma_cm_event)") public static final int RDMA_CM_EVENT_SIZE = 80;
    @CExpr("offsetof(struct rdma_cm_event, id)") public static final int RDMA_CM_EVENT_ID = 0;
    @CExpr("offsetof(struct rdma_cm_event, listen_id)") public static final int RDMA_CM_EVENT_LISTEN_ID = 8;
    @CExpr("offsetof(struct rdma_cm_event, event)") public static final int RDMA_CM_EVENT_EVENT = 16;
    @CExpr("offsetof(struct rdma_cm_event, status)") public static final int RDMA_CM_EVENT_STATUS = 20;
    @CExpr("offsetof(struct rdma_cm_event, param.conn)") public static final int RDMA_CM_EVENT_PARAM_CONN = 24;
    @CExpr("sizeof(struct rdma_conn_param)") public static final int RDMA_CONN_PARAM_SIZE = 24;
    @CExpr("offsetof(struct rdma_conn_param, private_data)") public static final int RDMA_CONN_PARAM_PRIVATE_DATA = 0;
    @CExpr("offsetof(struct rdma_conn_param, private_data_len)") public static final int RDMA_CONN_PARAM_PRIVATE_DATA_LEN = 8;
    @CExpr("offsetof(struct rdma_conn_param, responder_resources)") public static final int RDMA_CONN_PARAM_RESPONDER_RESOURCES = 9;
    @CExpr("offsetof(struct rdma_conn_param, initiator_depth)") public static final int RDMA_CONN_PARAM_INITIATOR_DEPTH = 10;
    @CExpr("offsetof(struct rdma_conn_param, flow_control)") public static final int RDMA_CONN_PARAM_FLOW_CONTROL = 11;
    @CExpr("offsetof(struct rdma_conn_param, retry_count)") public static final int RDMA_CONN_PARAM_RETRY_COUNT = 12;
    @CExpr("offsetof(struct rdma_conn_param, rnr_retry_count)") public static final int RDMA_CONN_PARAM_RNR_RETRY_COUNT = 13;
    @CExpr("offsetof(struct rdma_conn_param, srq)") public static final int RDMA_CONN_PARAM_SRQ = 14;
    @CExpr("offsetof(struct rdma_conn_param, qp_num)") public static final int RDMA_CONN_PARAM_QP_NUM = 16;

    // ---- sockaddr (network byte order for port and address) ----
    @CExpr("sizeof(struct sockaddr_storage)") public static final int SOCKADDR_STORAGE_SIZE = 128;
    @CExpr("offsetof(struct sockaddr_in, sin_family)") public static final int SOCKADDR_FAMILY = 0;
    @CExpr("sizeof(struct sockaddr_in)") public static final int SOCKADDR_IN_SIZE = 16;
    @CExpr("offsetof(struct sockaddr_in, sin_port)") public static final int SOCKADDR_IN_PORT = 2;
    @CExpr("offsetof(struct sockaddr_in, sin_addr)") public static final int SOCKADDR_IN_ADDR = 4;
    @CExpr("sizeof(struct sockaddr_in6)") public static final int SOCKADDR_IN6_SIZE = 28;
    @CExpr("offsetof(struct sockaddr_in6, sin6_port)") public static final int SOCKADDR_IN6_PORT = 2;
    @CExpr("offsetof(struct sockaddr_in6, sin6_flowinfo)") public static final int SOCKADDR_IN6_FLOWINFO = 4;
    @CExpr("offsetof(struct sockaddr_in6, sin6_addr)") public static final int SOCKADDR_IN6_ADDR = 8;
    @CExpr("offsetof(struct sockaddr_in6, sin6_scope_id)") public static final int SOCKADDR_IN6_SCOPE_ID = 24;
    @CExpr("AF_INET") public static final int AF_INET = 2;
    @CExpr("AF_INET6") public static final int AF_INET6 = 10;

    // ---- struct pollfd and libc flags ----
    @CExpr("sizeof(struct pollfd)") public static final int POLLFD_SIZE = 8;
    @CExpr("offsetof(struct pollfd, fd)") public static final int POLLFD_FD = 0;
    @CExpr("offsetof(struct pollfd, events)") public static final int POLLFD_EVENTS = 4;
    @CExpr("offsetof(struct pollfd, revents)") public static final int POLLFD_REVENTS = 6;
    @CExpr("POLLIN") public static final int POLLIN = 1;
    @CExpr("F_GETFL") public static final int F_GETFL = 3;
    @CExpr("F_SETFL") public static final int F_SETFL = 4;
    @CExpr("O_NONBLOCK") public static final int O_NONBLOCK = 2048;
    @CExpr("EFD_NONBLOCK") public static final int EFD_NONBLOCK = 2048;
    @CExpr("EFD_CLOEXEC") public static final int EFD_CLOEXEC = 524288;
    @CExpr("EAGAIN") public static final int EAGAIN = 11;
    @CExpr("EEXIST") public static final int EEXIST = 17;
    @CExpr("ENOENT") public static final int ENOENT = 2;
    @CExpr("EBADF") public static final int EBADF = 9;

    // ---- epoll and timerfd (EpollWaiter); struct epoll_event is packed on x86_64 ----
    @CExpr("sizeof(struct epoll_event)") public static final int EPOLL_EVENT_SIZE = 12;
    @CExpr("offsetof(struct epoll_event, events)") public static final int EPOLL_EVENT_EVENTS = 0;
    @CExpr("offsetof(struct epoll_event, data)") public static final int EPOLL_EVENT_DATA = 4;
    @CExpr("EPOLLIN") public static final int EPOLLIN = 1;
    @CExpr("EPOLL_CTL_ADD") public static final int EPOLL_CTL_ADD = 1;
    @CExpr("EPOLL_CTL_DEL") public static final int EPOLL_CTL_DEL = 2;
    @CExpr("EPOLL_CLOEXEC") public static final int EPOLL_CLOEXEC = 524288;
    @CExpr("CLOCK_MONOTONIC") public static final int CLOCK_MONOTONIC = 1;
    @CExpr("TFD_NONBLOCK") public static final int TFD_NONBLOCK = 2048;
    @CExpr("TFD_CLOEXEC") public static final int TFD_CLOEXEC = 524288;
    @CExpr("sizeof(struct itimerspec)") public static final int ITIMERSPEC_SIZE = 32;
    @CExpr("offsetof(struct itimerspec, it_interval)") public static final int ITIMERSPEC_INTERVAL = 0;
    @CExpr("offsetof(struct itimerspec, it_value)") public static final int ITIMERSPEC_VALUE = 16;
    @CExpr("offsetof(struct timespec, tv_sec)") public static final int TIMESPEC_SEC = 0;
    @CExpr("offsetof(struct timespec, tv_nsec)") public static final int TIMESPEC_NSEC = 8;
    @CExpr("EINTR") public static final int EINTR = 4;
    @CExpr("ENODEV") public static final int ENODEV = 19;
    @CExpr("EIO") public static final int EIO = 5;

    // ---- enum values ----
    @CExpr("IBV_QPT_RC") public static final int IBV_QPT_RC = 2;
    @CExpr("IBV_MW_TYPE_2") public static final int IBV_MW_TYPE_2 = 2;
    @CExpr("EOPNOTSUPP") public static final int EOPNOTSUPP = 95;
    @CExpr("IBV_QP_STATE") public static final int IBV_QP_STATE = 1;
    @CExpr("IBV_QPS_ERR") public static final int IBV_QPS_ERR = 6;
    @CExpr("RDMA_PS_TCP") public static final int RDMA_PS_TCP = 0x0106;
    @CExpr("IBV_EVENT_COMM_EST") public static final int IBV_EVENT_COMM_EST = 4;
    @CExpr("IBV_EVENT_QP_FATAL") public static final int IBV_EVENT_QP_FATAL = 1;
    @CExpr("IBV_EVENT_QP_REQ_ERR") public static final int IBV_EVENT_QP_REQ_ERR = 2;
    @CExpr("IBV_EVENT_QP_ACCESS_ERR") public static final int IBV_EVENT_QP_ACCESS_ERR = 3;
    @CExpr("IBV_EVENT_SQ_DRAINED") public static final int IBV_EVENT_SQ_DRAINED = 5;
    @CExpr("IBV_EVENT_PATH_MIG") public static final int IBV_EVENT_PATH_MIG = 6;
    @CExpr("IBV_EVENT_PATH_MIG_ERR") public static final int IBV_EVENT_PATH_MIG_ERR = 7;
    @CExpr("IBV_EVENT_QP_LAST_WQE_REACHED") public static final int IBV_EVENT_QP_LAST_WQE_REACHED = 16;
}

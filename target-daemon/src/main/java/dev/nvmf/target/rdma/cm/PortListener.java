package dev.nvmf.target.rdma.cm;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.verbs.CmId;

/** A listening CM id for one configured port; it is the context of connect requests that arrive on it. */
public final class PortListener {
    private final RdmaPortConfig config;
    private CmId id;

    PortListener(RdmaPortConfig config) {
        this.config = config;
    }

    public RdmaPortConfig config() { return config; }

    public CmId id() { return id; }

    void id(CmId id) { this.id = id; }

    /** The bound address (port 0 in the config resolves to the port the CM picked). */
    public java.net.InetSocketAddress localAddress() {
        return id == null ? null : id.localAddress();
    }
}

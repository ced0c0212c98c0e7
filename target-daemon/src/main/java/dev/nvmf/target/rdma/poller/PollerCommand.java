package dev.nvmf.target.rdma.poller;

/** Work another thread hands to a poller (control path; may allocate). Runs on the poller thread. */
@FunctionalInterface
public interface PollerCommand {
    void run(Poller poller);
}

package dev.nvmf.target.config;

/**
 * One entry of {@code ports[].referrals}: another target's discovery service, listed in the discovery log of hosts
 * that come in on this port with subsystem type "referral" (NVMe-oF 1.1 section 5.3; kernel configfs
 * {@code ports/N/referrals/NAME}).
 *
 * @param trtype  transport of the referred discovery service: rdma or tcp
 * @param adrfam  ipv4 or ipv6
 * @param traddr  its address (an IP literal)
 * @param trsvcid its port number (8009 is the discovery port of NVMe/TCP, 4420 is the usual RDMA port)
 * @param portid  PORTID of the log entry (kernel addr_portid)
 */
public record ReferralSection(String trtype, String adrfam, String traddr, int trsvcid, int portid) {
    /** "rdma 10.0.0.2:4420", IPv6 in brackets, for logs and diffs. */
    public String describe() {
        return trtype + " " + ("ipv6".equals(adrfam) ? "[" + traddr + "]" : traddr) + ":" + trsvcid;
    }
}

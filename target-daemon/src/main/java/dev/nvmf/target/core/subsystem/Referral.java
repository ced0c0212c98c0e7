package dev.nvmf.target.core.subsystem;

import java.util.Objects;

/**
 * A discovery referral: another target's discovery controller, listed in the discovery log with SUBTYPE 1
 * (kernel: port referrals, {@code nvmet_referral_add}).
 */
public record Referral(int portId, int transportType, int addressFamily, String address, String serviceId) {
    public Referral {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(serviceId, "serviceId");
        if (portId < 0 || portId > 0xFFFF) {
            throw new IllegalArgumentException("referral port id must be 0..65535: " + portId);
        }
    }
}

package dev.nvmf.target.core.discovery;

import dev.nvmf.target.nvme.DiscoveryLog;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * TRADDR text of an IP-based port (NVMe-oF 1.1, 5.3: the address in its usual text form): which configured
 * addresses are wildcards, and the text of a concrete address, as the kernel target prints it ({@code %pISc}: IPv4
 * dotted quad, IPv6 in the compressed form of RFC 5952, no scope, no port).
 */
final class TransportAddresses {
    private TransportAddresses() {
    }

    /** True for the "any" addresses a listener binds to every local address with: 0.0.0.0 and ::. */
    static boolean isWildcard(String address) {
        try {
            return InetAddress.ofLiteral(address).isAnyLocalAddress();
        } catch (IllegalArgumentException notAnIpLiteral) {
            return false;
        }
    }

    /** ADRFAM of an address. */
    static int addressFamily(InetAddress address) {
        return address instanceof Inet6Address ? DiscoveryLog.ADRFAM_IPV6 : DiscoveryLog.ADRFAM_IPV4;
    }

    /** The TRADDR text of a concrete address. */
    static String format(InetAddress address) {
        if (address instanceof Inet4Address) {
            return address.getHostAddress();
        }
        byte[] b = address.getAddress();
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xFF) << 8) | (b[2 * i + 1] & 0xFF);
        }
        // The longest run of two or more zero groups becomes "::" (the first such run on a tie).
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        StringBuilder s = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                s.append("::");
                i += bestLength - 1;
                continue;
            }
            if (s.length() > 0 && s.charAt(s.length() - 1) != ':') {
                s.append(':');
            }
            s.append(Integer.toHexString(groups[i]));
        }
        return s.toString();
    }
}

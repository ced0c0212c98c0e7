package dev.nvmf.target.core.discovery;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** TRADDR text as the kernel target prints it (%pISc: RFC 5952 for IPv6) and wildcard detection. */
class TransportAddressesTest {
    private static String f(String literal) throws Exception {
        return TransportAddresses.format(InetAddress.getByName(literal));
    }

    @Test
    void ipv6IsCompressedAsRfc5952Says() throws Exception {
        assertEquals("fd00::12", f("fd00:0:0:0:0:0:0:12"));
        assertEquals("::1", f("0:0:0:0:0:0:0:1"));
        assertEquals("fe80::", f("fe80:0:0:0:0:0:0:0"));
        assertEquals("2001:db8::1:0:0:1", f("2001:db8:0:0:1:0:0:1"), "the first of two equal runs");
        assertEquals("2001:db8:0:1:1:1:1:1", f("2001:db8:0:1:1:1:1:1"), "a single zero group stays");
        assertEquals("2001:db8::2:1", f("2001:0db8:0000:0000:0000:0000:0002:0001"), "no leading zeroes");
        assertEquals("1:0:0:2::3", f("1:0:0:2:0:0:0:3"), "the longest run");
        assertEquals("10.1.2.3", f("10.1.2.3"));
        assertEquals("10.1.2.3", f("::ffff:10.1.2.3"), "an IPv4-mapped address is the IPv4 address");
    }

    @Test
    void wildcards() {
        assertTrue(TransportAddresses.isWildcard("0.0.0.0"));
        assertTrue(TransportAddresses.isWildcard("::"));
        assertTrue(TransportAddresses.isWildcard("0:0:0:0:0:0:0:0"));
        assertFalse(TransportAddresses.isWildcard("192.168.1.1"));
        assertFalse(TransportAddresses.isWildcard("::1"));
        assertFalse(TransportAddresses.isWildcard("target.example"), "not a literal: no lookup, not a wildcard");
    }
}

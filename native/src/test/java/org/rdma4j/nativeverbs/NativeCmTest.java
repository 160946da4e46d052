// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.rdma4j.nativeverbs.abi.CmConstants;
import org.rdma4j.nativeverbs.abi.CmLayouts;
import org.rdma4j.nativeverbs.abi.Rdmacm;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/** The librdmacm binding where a host without RDMA devices can check it: addresses, and the error path. */
class NativeCmTest {
    @Test
    void ipv4AddressesAreSockaddrInInNetworkOrder() throws Exception {
        try (Arena a = Arena.ofConfined()) {
            InetSocketAddress in = new InetSocketAddress(InetAddress.getByName("10.77.0.1"), 7174);
            MemorySegment s = NativeCmId.sockaddr(a, in);
            assertEquals(CmLayouts.sockaddr_in.byteSize(), s.byteSize());
            assertEquals(CmConstants.AF_INET, s.get(ValueLayout.JAVA_SHORT, 0));
            assertArrayEquals(new byte[] {0x1c, 0x06, 10, 77, 0, 1}, s.asSlice(2, 6).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(in, NativeCmId.address(storage(a, s)));
        }
    }

    @Test
    void ipv6AddressesAreSockaddrIn6InNetworkOrder() throws Exception {
        try (Arena a = Arena.ofConfined()) {
            InetSocketAddress in = new InetSocketAddress(InetAddress.getByName("fd77::1"), 0x1c06);
            MemorySegment s = NativeCmId.sockaddr(a, in);
            assertEquals(CmLayouts.sockaddr_in6.byteSize(), s.byteSize());
            assertEquals(CmConstants.AF_INET6, s.get(ValueLayout.JAVA_SHORT, 0));
            assertArrayEquals(new byte[] {0x1c, 0x06}, s.asSlice(2, 2).toArray(ValueLayout.JAVA_BYTE));
            byte[] ip = s.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
            assertEquals((byte) 0xfd, ip[0]);
            assertEquals(1, ip[15]);
            assertEquals(in, NativeCmId.address(storage(a, s)));
        }
    }

    @Test
    void anUnknownFamilyIsNoAddress() {
        try (Arena a = Arena.ofConfined()) {
            assertNull(NativeCmId.address(a.allocate(CmLayouts.sockaddr_storage)));
        }
    }

    private static MemorySegment storage(Arena a, MemorySegment s) {
        MemorySegment st = a.allocate(CmLayouts.sockaddr_storage);
        st.copyFrom(s);
        return st;
    }

    /**
     * Without RDMA devices librdmacm refuses to make an event channel with ENODEV (its device list is
     * empty; a kernel without rdma_cm is not found out earlier: librdmacm then assumes the newest ABI).
     * The error reaches the caller as such, nothing is left half made, and a second try fails the same way.
     */
    @Test
    void withoutDevicesTheConnectionManagerSaysWhy() {
        Assumptions.assumeTrue(NativeProvider.libraryCause() == null, "libibverbs cannot be used");
        Assumptions.assumeTrue(Rdmacm.UNAVAILABLE == null, () -> "librdmacm cannot be used: " + Rdmacm.UNAVAILABLE);
        Assumptions.assumeTrue(new NativeProvider().devices().isEmpty(), "this host has RDMA devices");
        int expected = Errno.ENODEV;
        for (int i = 0; i < 2; i++) {
            VerbsException e = assertThrows(VerbsException.class, NativeCm::instance);
            assertEquals(expected, e.errno(), e.getMessage());
        }
    }
}

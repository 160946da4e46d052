// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;

/** The socket calls report errno as before they used the shared FFM plumbing. */
class LinuxSocketsTest {
    @BeforeAll
    static void linuxOnly() {
        Assumptions.assumeTrue(LinuxSockets.isAvailable(), () -> "libc sockets: " + LinuxSockets.unavailabilityCause());
    }

    @Test
    void controlPathFailureThrowsWithErrnoAndItsName() {
        IOException e = assertThrows(IOException.class,
                () -> LinuxSockets.socket(new LinuxSockets.Call(), -1, LinuxSockets.SOCK_DGRAM, 0));

        assertEquals("socket failed: errno 97 (EAFNOSUPPORT)", e.getMessage());
    }

    @Test
    void bindToAPortInUseIsEaddrinuse() throws IOException {
        LinuxSockets.Call c = new LinuxSockets.Call();
        try (DatagramSocket owner = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
                Arena arena = Arena.ofConfined()) {
            int fd = LinuxSockets.socket(c, LinuxSockets.AF_INET, LinuxSockets.SOCK_DGRAM, LinuxSockets.IPPROTO_UDP);
            try {
                MemorySegment sa = arena.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
                int len = LinuxSockets.writeSockaddr(sa, new byte[] {127, 0, 0, 1}, owner.getLocalPort());

                IOException e = assertThrows(IOException.class, () -> LinuxSockets.bind(c, fd, sa, len));

                assertEquals("bind failed: errno 98 (EADDRINUSE: another process owns the port)", e.getMessage());
            } finally {
                LinuxSockets.close(fd);
            }
        }
    }

    @Test
    void dataPathFailureReturnsMinusErrno() {
        LinuxSockets.Call c = new LinuxSockets.Call();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(8);
            MemorySegment sa = arena.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
            int len = LinuxSockets.writeSockaddr(sa, new byte[] {127, 0, 0, 1}, 9);

            assertEquals(-Errno.EBADF, LinuxSockets.sendto(c, -1, buf, 8, sa, len));
            assertEquals(-Errno.EBADF, LinuxSockets.recvmmsg(c, -1, buf, 0));
        }
    }
}

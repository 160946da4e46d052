// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.PacketPool;

/**
 * UDP segmentation offload in {@link NativeUdpSocket#sendStaged}: a run of equal datagrams to one
 * destination leaves as one GSO message and arrives as the same datagrams, in order; a shorter one ends
 * a run, a longer one or another destination starts a new one, a run shorter than
 * {@link NativeUdpSocket#GSO_MIN_RUN} is a message per datagram; a GSO message the kernel refuses is sent
 * again one datagram per message, and GSO is not tried again for that length.
 */
class UdpGsoTest {
    private static final long WAIT_NANOS = 5_000_000_000L;

    @BeforeEach
    void needsLibcSocketsAndGso() {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable(), "libc sockets");
        Assumptions.assumeTrue(NativeUdpSocket.GSO_ENABLED, "-Drdma4j.udp.gso=false");
    }

    /** Datagram {@code i}: {@code length} bytes, each telling its datagram and place. */
    private static MemorySegment datagram(Arena arena, int i, int length) {
        MemorySegment d = arena.allocate(length, 8);
        for (int j = 0; j < length; j++) {
            d.set(ValueLayout.JAVA_BYTE, j, (byte) (i * 13 + j));
        }
        return d;
    }

    private static void assertArrived(List<byte[]> got, MemorySegment... sent) {
        assertEquals(sent.length, got.size(), "datagrams received");
        for (int i = 0; i < sent.length; i++) {
            assertArrayEquals(sent[i].toArray(ValueLayout.JAVA_BYTE), got.get(i), "datagram " + i);
        }
    }

    @Test
    void equalDatagramsToOneDestinationLeaveAsOneMessageAndArriveApart() throws Exception {
        InetAddress local = InetAddress.getByName("127.0.0.1");
        InetAddress peerAddress = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(33791, local, peerAddress);
        int peerPort = SoftDevices.freeUdpPort(port + 1, local, peerAddress);
        int otherPort = SoftDevices.freeUdpPort(peerPort + 1, local, peerAddress);
        NativeUdpSocket s = new NativeUdpSocket(local.getAddress(), port, false, 0, new PacketPool());
        try (Arena arena = Arena.ofConfined(); DatagramChannel peer = DatagramChannel.open();
             DatagramChannel other = DatagramChannel.open()) {
            peer.bind(new InetSocketAddress(peerAddress, peerPort)).configureBlocking(false);
            other.bind(new InetSocketAddress(peerAddress, otherPort)).configureBlocking(false);
            byte[] to = peerAddress.getAddress();
            // to the peer: 6 of 40 bytes and a shorter one (one GSO message of 7), 4 of 300 (another),
            // 1 of 40 to the other port, then 3 of 40 to the peer (too few: three messages)
            int[] lengths = {40, 40, 40, 40, 40, 40, 33, 300, 300, 300, 300, 40, 40, 40, 40};
            int[] ports = {peerPort, peerPort, peerPort, peerPort, peerPort, peerPort, peerPort, peerPort, peerPort,
                peerPort, peerPort, otherPort, peerPort, peerPort, peerPort};
            MemorySegment[] sent = new MemorySegment[lengths.length];
            for (int i = 0; i < lengths.length; i++) {
                sent[i] = datagram(arena, i, lengths[i]);
                s.stage(i, sent[i], lengths[i], to, ports[i]);
            }
            long calls = s.sendBatchCalls();
            assertEquals(lengths.length, s.sendStaged(0, lengths.length));
            assertEquals(1, s.sendBatchCalls() - calls, "one sendmmsg");
            assertEquals(2, s.gsoMessages(), "two GSO messages");
            assertEquals(7 + 4, s.gsoDatagrams());
            assertArrived(UdpBatchTest.receive(peer, 14), sent[0], sent[1], sent[2], sent[3], sent[4], sent[5], sent[6],
                    sent[7], sent[8], sent[9], sent[10], sent[12], sent[13], sent[14]);
            assertArrived(UdpBatchTest.receive(other, 1), sent[11]);
        } finally {
            s.close();
        }
    }

    /**
     * An IPv6 socket that sends zero UDP checksums (UDP_NO_CHECK6_TX) cannot use GSO: the kernel refuses
     * the message (EINVAL), the datagrams go one per message, and GSO is off from that length up.
     */
    @Test
    void aRefusedGsoMessageIsSentOneDatagramAtATime() throws Exception {
        InetAddress local = InetAddress.getByName("::1");
        int port;
        try {
            port = SoftDevices.freeUdpPort(35791, local);
        } catch (RuntimeException e) {
            Assumptions.abort("no IPv6 loopback here: " + e.getMessage());
            return;
        }
        int peerPort = SoftDevices.freeUdpPort(port + 1, local);
        NativeUdpSocket s;
        try {
            s = new NativeUdpSocket(local.getAddress(), port, true, 0, new PacketPool());
        } catch (IOException e) {
            Assumptions.abort("no IPv6 loopback here: " + e.getMessage());
            return;
        }
        // The peer must accept zero checksums (UDP_NO_CHECK6_RX, as rdma4j's IPv6 sockets do): a
        // NativeUdpSocket, whose receive counts the datagrams (these are not RoCE packets: the checks
        // after it drop them as malformed, which is fine here).
        NativeUdpSocket peer = new NativeUdpSocket(local.getAddress(), peerPort, true, 0, new PacketPool());
        UdpDatagrams peerDatagrams = new UdpDatagrams(p -> p.release(), true, peerPort,
                org.rdma4j.verbs.Gid.of(local), local.getAddress());
        try (Arena arena = Arena.ofConfined()) {
            LinuxSockets.setIntOption(s.sendCall, s.fd, LinuxSockets.SOL_UDP, 101 /* UDP_NO_CHECK6_TX */, 1);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 5; i++) {
                    s.stage(i, datagram(arena, round * 10 + i, 64), 64, local.getAddress(), peerPort);
                }
                long calls = s.sendBatchCalls();
                assertEquals(5, s.sendStaged(0, 5), "round " + round);
                // round 0: the refused GSO message, then the five one by one; round 1: no GSO tried
                assertEquals(round == 0 ? 2 : 1, s.sendBatchCalls() - calls, "sendmmsg calls in round " + round);
                assertEquals(0, s.gsoMessages());
                int got = 0;
                long end = System.nanoTime() + WAIT_NANOS;
                while (got < 5 && System.nanoTime() < end) {
                    got += peer.receiveNow(peerDatagrams, new UdpDatagrams.Scratch());
                }
                assertEquals(5, got, "datagrams received in round " + round);
            }
        } finally {
            s.close();
            peer.close();
        }
    }
}

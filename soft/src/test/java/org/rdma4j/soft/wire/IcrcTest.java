// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class IcrcTest {
    private final Icrc icrc = new Icrc();

    /** A random but well-formed RoCEv2 packet (IP header at 0) with a correct ICRC from the reference. */
    private static byte[] randomPacket(Random random, int version, int ipv4Words, int payloadLength) {
        int ipLength = version == 4 ? ipv4Words * 4 : Ipv6Header.LENGTH;
        int pad = Bth.padCountFor(payloadLength);
        byte[] p = new byte[ipLength + UdpHeader.LENGTH + Bth.LENGTH + payloadLength + pad + Icrc.LENGTH];
        random.nextBytes(p);
        if (version == 4) {
            p[0] = (byte) (0x40 | ipv4Words);
            p[Ipv4Header.PROTOCOL_OFFSET] = Ipv4Header.PROTOCOL_UDP;
        } else {
            p[0] = (byte) (0x60 | p[0] & 0x0F);
            p[Ipv6Header.NEXT_HEADER_OFFSET] = Ipv6Header.NEXT_HEADER_UDP;
        }
        MemorySegment s = MemorySegment.ofArray(p);
        new Bth().wrap(s, ipLength + UdpHeader.LENGTH).opcode(Opcode.RC_SEND_ONLY).padCount(pad);
        Icrc.write(s, p.length - 4, IcrcReference.of(p, true));
        return p;
    }

    @Test
    void icrcIsStoredLeastSignificantByteFirst() {
        byte[] bytes = new byte[6];
        MemorySegment s = MemorySegment.ofArray(bytes);
        Icrc.write(s, 1, 0x09E5_BF27);
        assertArrayEquals(new byte[] {0, 0x27, (byte) 0xBF, (byte) 0xE5, 0x09, 0}, bytes);
        assertEquals(0x09E5_BF27, Icrc.read(s, 1));
    }

    @Test
    void matchesTheReferenceOnRandomPacketsAcrossScratchChunkBoundaries() {
        Random random = new Random(4791);
        int[] payloads = {0, 1, 3, 4, 1024, 4095, 4096, 4097, 4096 - 12, 8192 + 5, 9000};
        for (int payload : payloads) {
            for (int version : new int[] {4, 6}) {
                byte[] p = randomPacket(random, version, 5, payload);
                MemorySegment s = MemorySegment.ofArray(p);
                int expected = IcrcReference.of(p, true);
                assertEquals(expected, version == 4 ? icrc.computeIpv4(s, 0, p.length) : icrc.computeIpv6(s, 0, p.length),
                        "IPv" + version + " payload " + payload);
                assertTrue(icrc.verify(s, 0, p.length));
            }
        }
    }

    @Test
    void coversIpv4OptionsWhenIhlIsAboveFive() {
        byte[] p = randomPacket(new Random(1), 4, 7, 100);
        MemorySegment s = MemorySegment.ofArray(p);
        assertTrue(icrc.verifyIpv4(s, 0, p.length));
        p[Ipv4Header.LENGTH + 3] ^= 1; // inside the options
        assertFalse(icrc.verifyIpv4(s, 0, p.length));
    }

    @Test
    void worksOnNativeSegmentsAtAnyOffset() {
        byte[] p = randomPacket(new Random(2), 6, 5, 5000);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(p.length + 13);
            MemorySegment.copy(p, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, 13, p.length);
            assertEquals(IcrcReference.of(p, true), icrc.computeIpv6(s, 13, p.length));
            assertTrue(icrc.verifyIpv6(s, 13, p.length));
            assertTrue(icrc.verify(s, 13, p.length));
        }
    }

    @Test
    void separateHeaderAndBthOnwardBuffersGiveTheWholePacketIcrc() {
        for (int version : new int[] {4, 6}) {
            byte[] p = randomPacket(new Random(version), version, 5, 333);
            int headers = (version == 4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH) + UdpHeader.LENGTH;
            MemorySegment ipUdp = MemorySegment.ofArray(Arrays.copyOf(p, headers));
            byte[] bth = new byte[p.length - headers + 7];
            System.arraycopy(p, headers, bth, 7, p.length - headers);
            assertEquals(IcrcReference.of(p, true), icrc.compute(ipUdp, 0, MemorySegment.ofArray(bth), 7, p.length - headers));
        }
    }

    @Test
    void bthOnwardVariantVerifiesItselfIgnoresEcnAndCatchesDamage() {
        byte[] p = new byte[Bth.LENGTH + 64 + Icrc.LENGTH];
        new Random(3).nextBytes(p);
        MemorySegment s = MemorySegment.ofArray(p);
        Icrc.write(s, p.length - 4, icrc.computeBthOnward(s, 0, p.length));
        assertTrue(icrc.verifyBthOnward(s, 0, p.length));
        new Bth().wrap(s, 0).fecn(true).becn(true);
        assertTrue(icrc.verifyBthOnward(s, 0, p.length), "congestion marks set in flight do not break it");
        for (int i = 0; i < p.length; i++) {
            if (i == Bth.ECN_OFFSET) {
                continue;
            }
            p[i] ^= 0x10;
            assertFalse(icrc.verifyBthOnward(s, 0, p.length), "byte " + i);
            p[i] ^= 0x10;
        }
    }

    @Test
    void bthOnwardIcrcDiffersFromTheRoceIcrc() {
        byte[] p = Golden.bytes(Golden.IPV4_ACK);
        MemorySegment s = MemorySegment.ofArray(p);
        int headers = Ipv4Header.LENGTH + UdpHeader.LENGTH;
        assertNotEquals(icrc.computeIpv4(s, 0, p.length), icrc.computeBthOnward(s, headers, p.length - headers));
    }

    @Test
    void verifyAnswersFalseForMalformedInputInsteadOfThrowing() {
        byte[] p = Golden.bytes(Golden.IPV4_ACK);
        MemorySegment s = MemorySegment.ofArray(p);
        assertFalse(icrc.verify(s, 0, p.length + 1), "longer than the segment");
        assertFalse(icrc.verify(s, 1, p.length), "runs past the end");
        assertFalse(icrc.verify(s, -1, p.length));
        assertFalse(icrc.verify(s, 0, 0));
        assertFalse(icrc.verify(s, 0, p.length - 1), "truncated");
        assertFalse(icrc.verifyIpv4(s, 0, 20 + 8 + 12 + 3), "too short for BTH and ICRC");
        assertFalse(icrc.verifyIpv6(s, 0, p.length), "an IPv4 packet is not IPv6");
        assertFalse(icrc.verifyBthOnward(s, 0, 15));
        byte[] tcp = p.clone();
        tcp[Ipv4Header.PROTOCOL_OFFSET] = 6;
        assertFalse(icrc.verifyIpv4(MemorySegment.ofArray(tcp), 0, tcp.length));
        byte[] shortIhl = p.clone();
        shortIhl[0] = 0x44;
        assertFalse(icrc.verifyIpv4(MemorySegment.ofArray(shortIhl), 0, shortIhl.length));
        byte[] v5 = p.clone();
        v5[0] = 0x55;
        assertFalse(icrc.verify(MemorySegment.ofArray(v5), 0, v5.length));
    }

    @Test
    void computeRejectsLengthsThatCannotHoldTheHeaders() {
        MemorySegment s = MemorySegment.ofArray(Golden.bytes(Golden.IPV4_ACK));
        assertThrows(IllegalArgumentException.class, () -> icrc.computeIpv4(s, 0, 20 + 8 + 15));
        assertThrows(IllegalArgumentException.class, () -> icrc.computeIpv6(s, 0, 40 + 8 + 15));
        assertThrows(IllegalArgumentException.class, () -> icrc.computeBthOnward(s, 28, 15));
        assertThrows(IllegalArgumentException.class, () -> icrc.compute(s, 0, s, 28, 15));
        MemorySegment notIp = MemorySegment.ofArray(new byte[64]);
        assertThrows(IllegalArgumentException.class, () -> icrc.compute(notIp, 0, notIp, 28, 20));
    }

    @Test
    void hotPathAllocatesNothing() {
        Assumptions.assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean,
                "needs per-thread allocation counters");
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
        MemorySegment v4 = Golden.segment(Golden.IPV4_SEND_FIRST);
        MemorySegment v6 = Golden.segment(Golden.IPV6_ACK);
        int v4Length = (int) v4.byteSize();
        int v6Length = (int) v6.byteSize();
        Bth bth = new Bth();
        Aeth aeth = new Aeth();
        int sink = 0;
        for (int i = 0; i < 30_000; i++) {
            sink += workload(v4, v4Length, v6, v6Length, bth, aeth);
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            sink += workload(v4, v4Length, v6, v6Length, bth, aeth);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 10_000, "allocated " + allocated + " bytes in 10000 iterations (sink " + sink + ")");
    }

    private int workload(MemorySegment v4, int v4Length, MemorySegment v6, int v6Length, Bth bth, Aeth aeth) {
        int result = icrc.computeIpv4(v4, 0, v4Length);
        result += icrc.verifyIpv6(v6, 0, v6Length) ? 1 : 0;
        result += icrc.computeBthOnward(v6, 48, v6Length - 48);
        bth.wrap(v6, 48);
        result += bth.psn() + bth.destQpn() + Opcode.headerLength(bth.opcode());
        aeth.wrap(v6, 48 + Opcode.offsetOf(bth.opcode(), Opcode.HEADER_AETH));
        return result + aeth.msn() + Psn.compare(bth.psn(), 5);
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The IPv4 ICRC check a UDP receiver can do without seeing the IP Identification: it solves the ICRC
 * for the Identification. Known answers come from packets captured from rxe.
 */
class Ipv4IcrcSolverTest {
    private static final int HEADERS = Ipv4Header.LENGTH + UdpHeader.LENGTH;
    private static final int BTH_AT = HEADERS;
    private static final int SRC = 0x0A4D0001;
    private static final int DST = 0x0A4D0002;

    private final Ipv4IcrcSolver solver = new Ipv4IcrcSolver();

    @ParameterizedTest
    @CsvSource({"rxe-ipv4-send-first.hex, 0x4967", "rxe-ipv4-ack.hex, 0x4972", "peer-ipv4-raw-ack.hex, 0x1234"})
    void recoversTheIdentificationOfCapturedPacketsFromTheIcrcAlone(String file, String id) {
        byte[] bytes = Golden.bytes(file);
        bytes[Ipv4Header.IDENTIFICATION_OFFSET] = 0; // the receiver never sees these two bytes
        bytes[Ipv4Header.IDENTIFICATION_OFFSET + 1] = 0;
        assertEquals(Integer.decode(id), solver.solvePacket(MemorySegment.ofArray(bytes), 0, bytes.length));
    }

    @ParameterizedTest
    @CsvSource({"rxe-ipv4-send-first.hex, 0x4967", "rxe-ipv4-ack.hex, 0x4972"})
    void theReceivePathFormAcceptsRxePacketsAndRejectsThemFromAnotherSource(String file, String id) {
        byte[] bytes = Golden.bytes(file);
        MemorySegment p = MemorySegment.ofArray(bytes);
        Ipv4Header ip = new Ipv4Header().wrap(p, 0);
        UdpHeader udp = new UdpHeader().wrap(p, Ipv4Header.LENGTH);
        int bthLength = bytes.length - HEADERS;
        assertEquals(Integer.decode(id), solver.solve(ip.sourceAddress(), ip.destinationAddress(),
                udp.sourcePort(), udp.destinationPort(), p, BTH_AT, bthLength));
        assertEquals(Ipv4IcrcSolver.NONE, solver.solve(ip.sourceAddress() ^ 1, ip.destinationAddress(),
                udp.sourcePort(), udp.destinationPort(), p, BTH_AT, bthLength), "another sender's address");
        assertEquals(Ipv4IcrcSolver.NONE, solver.solve(ip.sourceAddress(), ip.destinationAddress(),
                udp.sourcePort() ^ 0x100, udp.destinationPort(), p, BTH_AT, bthLength), "another source port");
    }

    @Property(tries = 300)
    void aCorrectPacketIsAcceptedWhateverItsIdentification(@ForAll @IntRange(max = 0xFFFF) int id,
                                                           @ForAll @IntRange(max = 4096) int payload,
                                                           @ForAll long seed) {
        MemorySegment p = packet(payload, id, new SplittableRandom(seed));
        assertEquals(id, solver.solvePacket(p, 0, (int) p.byteSize()));
    }

    @Property(tries = 1000)
    void aSingleFlippedBitAfterTheUdpHeaderIsRejected(@ForAll @IntRange(max = 4096) int payload,
                                                      @ForAll @IntRange(max = 0xFFFF) int id,
                                                      @ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        MemorySegment p = packet(payload, id, random);
        int at;
        do {
            at = BTH_AT + random.nextInt((int) p.byteSize() - BTH_AT);
        } while (at == BTH_AT + Bth.ECN_OFFSET); // masked in the ICRC
        flip(p, at, random.nextInt(8));
        assertEquals(Ipv4IcrcSolver.NONE, solver.solvePacket(p, 0, (int) p.byteSize()));
    }

    /**
     * Exhaustive: whether a flipped bit goes unnoticed depends only on its distance from the
     * Identification (for covered bytes) or on the packet length (for ICRC bits), so one packet of the
     * largest size covers every data position, and every length covers the ICRC bits.
     */
    @Test
    void everySingleBitErrorIsCaughtUpToA4KiBMtu() {
        int payload = 4096;
        MemorySegment p = packet(payload, 0x4972, new SplittableRandom(1));
        int length = (int) p.byteSize();
        int[] rebuiltByTheReceiver = {Ipv4Header.IDENTIFICATION_OFFSET, Ipv4Header.IDENTIFICATION_OFFSET + 1};
        for (int at = 0; at < length; at++) {
            if (masked(at) || at == rebuiltByTheReceiver[0] || at == rebuiltByTheReceiver[1]
                    || at == 2 || at == 3 || at == 6 || at == 7 || at == 9 || at == 24 || at == 25) {
                continue; // masked, the unknown, or rebuilt from the datagram by the receiver (lengths, flags, protocol)
            }
            for (int bit = 0; bit < 8; bit++) {
                flip(p, at, bit);
                assertEquals(Ipv4IcrcSolver.NONE, solver.solvePacket(p, 0, length), "byte " + at + " bit " + bit);
                flip(p, at, bit);
            }
        }
        int firstTail = 8 + Ipv4Header.LENGTH + UdpHeader.LENGTH + Bth.LENGTH - (8 + Ipv4Header.FLAGS_FRAGMENT_OFFSET + 1);
        for (int tail = firstTail; tail <= firstTail + payload + 64; tail++) {
            for (int bit = 0; bit < 32; bit++) {
                assertEquals(Ipv4IcrcSolver.NONE, Ipv4IcrcSolver.solveDifference(1 << bit, tail),
                        "ICRC bit " + bit + " with " + tail + " bytes after the flags");
            }
        }
    }

    @Test
    void garbageIsRejectedWithoutThrowing() {
        MemorySegment p = packet(100, 7, new SplittableRandom(2));
        int bthLength = (int) p.byteSize() - HEADERS;
        assertEquals(Ipv4IcrcSolver.NONE, solver.solve(SRC, DST, 1, 4791, p, BTH_AT, 15));
        assertEquals(Ipv4IcrcSolver.NONE, solver.solve(SRC, DST, 1, 4791, p, BTH_AT, bthLength + 1));
        assertEquals(Ipv4IcrcSolver.NONE, solver.solve(SRC, DST, 1, 4791, p, -1, bthLength));
        assertEquals(Ipv4IcrcSolver.NONE, solver.solvePacket(p, 0, 30));
    }

    private static boolean masked(int at) {
        return at == Ipv4Header.TOS_OFFSET || at == Ipv4Header.TTL_OFFSET || at == Ipv4Header.CHECKSUM_OFFSET
                || at == Ipv4Header.CHECKSUM_OFFSET + 1 || at == Ipv4Header.LENGTH + UdpHeader.CHECKSUM_OFFSET
                || at == Ipv4Header.LENGTH + UdpHeader.CHECKSUM_OFFSET + 1 || at == BTH_AT + Bth.ECN_OFFSET;
    }

    private static void flip(MemorySegment p, int at, int bit) {
        p.set(ValueLayout.JAVA_BYTE, at, (byte) (p.get(ValueLayout.JAVA_BYTE, at) ^ 1 << bit));
    }

    /** A whole IPv4 RC SEND packet with DF set, random payload and pad, sealed with its real ICRC. */
    private static MemorySegment packet(int payload, int id, SplittableRandom random) {
        int pad = (4 - (payload & 3)) & 3;
        int total = HEADERS + Bth.LENGTH + payload + pad + Icrc.LENGTH;
        MemorySegment p = MemorySegment.ofArray(new byte[total]);
        new Ipv4Header().wrap(p, 0).writeUdp(random.nextInt(256), total, id, true, 64, SRC, DST);
        new UdpHeader().wrap(p, Ipv4Header.LENGTH).write(0xC000 | random.nextInt(0x4000), 4791,
                total - Ipv4Header.LENGTH, 0);
        new Bth().wrap(p, BTH_AT).write(Opcode.RC_SEND_ONLY, false, pad, 0xFFFF, random.nextInt(1 << 24), true,
                random.nextInt(1 << 24));
        for (int i = BTH_AT + Bth.LENGTH; i < total - Icrc.LENGTH; i++) {
            p.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
        Icrc.write(p, total - Icrc.LENGTH, new Icrc().computeIpv4(p, 0, total));
        return p;
    }
}

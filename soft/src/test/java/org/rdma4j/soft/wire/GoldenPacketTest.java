// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Known-answer tests against packets captured from Linux rxe (see src/test/resources/golden/README.md). */
class GoldenPacketTest {

    /** What each capture holds, read off the hex by hand. */
    record Expected(String file, int ipVersion, int ipHeaderLength, int ipId, int udpSourcePort, int opcode,
                    int destQpn, int psn, int payloadLength, String icrcWireHex) {
        @Override
        public String toString() {
            return file;
        }
    }

    static Stream<Expected> packets() {
        return Stream.of(
            new Expected(Golden.IPV6_SEND_FIRST, 6, 40, -1, 0xF67E, Opcode.RC_SEND_FIRST, 0xABC, 0xC6FE12, 1024, "98a50c94"),
            new Expected(Golden.IPV6_ACK, 6, 40, -1, 0xF67E, Opcode.RC_ACKNOWLEDGE, 0xABC, 0x000126, 0, "788163b7"),
            new Expected(Golden.IPV4_SEND_FIRST, 4, 20, 0x4967, 0xF67E, Opcode.RC_SEND_FIRST, 0xABC, 0x6122EE, 1024, "27bfe509"),
            new Expected(Golden.IPV4_ACK, 4, 20, 0x4972, 0xF67E, Opcode.RC_ACKNOWLEDGE, 0xABC, 0x000126, 0, "fdf30df8"),
            new Expected(Golden.PEER_IPV4_RAW_ACK, 4, 20, 0x1234, 0x12B7, Opcode.RC_ACKNOWLEDGE, 0x11, 0x6122F1, 0, "7417e7e7"));
    }

    private final Icrc icrc = new Icrc();

    @Test
    void everyGoldenFileHasAnExpectation() {
        assertEquals(Golden.ALL.size(), packets().count());
        packets().forEach(e -> assertTrue(Golden.ALL.contains(e.file())));
    }

    @ParameterizedTest
    @MethodSource("packets")
    void ipAndUdpHeadersParse(Expected e) {
        byte[] bytes = Golden.bytes(e.file());
        MemorySegment packet = MemorySegment.ofArray(bytes);
        if (e.ipVersion() == 4) {
            Ipv4Header ip = new Ipv4Header().wrap(packet, 0);
            assertEquals(4, ip.version());
            assertEquals(e.ipHeaderLength(), ip.headerLength());
            assertEquals(bytes.length, ip.totalLength());
            assertEquals(e.ipId(), ip.identification());
            assertTrue(ip.dontFragment());
            assertEquals(Ipv4Header.PROTOCOL_UDP, ip.protocol());
            assertTrue(ip.isChecksumValid(), "IPv4 header checksum");
        } else {
            Ipv6Header ip = new Ipv6Header().wrap(packet, 0);
            assertEquals(6, ip.version());
            assertEquals(bytes.length - Ipv6Header.LENGTH, ip.payloadLength());
            assertEquals(Ipv6Header.NEXT_HEADER_UDP, ip.nextHeader());
            assertEquals(0xFD77_0000_0000_0000L, ip.sourceAddressHigh());
            assertEquals(1L, ip.sourceAddressLow());
        }
        UdpHeader udp = new UdpHeader().wrap(packet, e.ipHeaderLength());
        assertEquals(UdpHeader.ROCE_V2_PORT, udp.destinationPort());
        assertEquals(e.udpSourcePort(), udp.sourcePort());
        assertEquals(bytes.length - e.ipHeaderLength(), udp.length());
        assertEquals(0, udp.checksum(), "rxe and the peer send UDP checksum 0");
    }

    @ParameterizedTest
    @MethodSource("packets")
    void bthAndExtensionHeadersParse(Expected e) {
        byte[] bytes = Golden.bytes(e.file());
        MemorySegment packet = MemorySegment.ofArray(bytes);
        long bthOffset = e.ipHeaderLength() + UdpHeader.LENGTH;
        Bth bth = new Bth().wrap(packet, bthOffset);
        assertEquals(e.opcode(), bth.opcode());
        assertEquals(e.destQpn(), bth.destQpn());
        assertEquals(e.psn(), bth.psn());
        assertEquals(Bth.DEFAULT_PKEY, bth.pkey());
        assertEquals(0, bth.tver());
        assertEquals(0, bth.padCount());
        assertFalse(bth.solicitedEvent());
        assertFalse(bth.migReq());
        assertFalse(bth.fecn());
        assertFalse(bth.becn());
        assertFalse(bth.ackReq(), "neither a SEND_FIRST nor an ACK asks for an ACK");

        int bthLength = bytes.length - (int) bthOffset;
        int payload = bthLength - Opcode.headerLength(e.opcode()) - bth.padCount() - Icrc.LENGTH;
        assertEquals(e.payloadLength(), payload);
        if (e.opcode() == Opcode.RC_ACKNOWLEDGE) {
            Aeth aeth = new Aeth().wrap(packet, bthOffset + Opcode.offsetOf(e.opcode(), Opcode.HEADER_AETH));
            assertEquals(Aeth.ACK_CREDITS_INVALID, aeth.syndrome());
            assertTrue(Aeth.isAck(aeth.syndrome()));
            assertEquals(1, aeth.msn());
        } else {
            long payloadStart = bthOffset + Opcode.headerLength(e.opcode());
            for (int i = 0; i < payload; i++) {
                assertEquals((byte) 0x7B, packet.get(BigEndian.BYTE, payloadStart + i), "ibv_rc_pingpong fills with 0x7b");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("packets")
    void icrcRecipeReproducesTheCapturedIcrc(Expected e) {
        byte[] bytes = Golden.bytes(e.file());
        MemorySegment packet = MemorySegment.ofArray(bytes);
        int computed = e.ipVersion() == 4
                ? icrc.computeIpv4(packet, 0, bytes.length)
                : icrc.computeIpv6(packet, 0, bytes.length);
        assertEquals(e.icrcWireHex(), HexFormat.of().formatHex(IcrcReference.wireBytes(computed)));
        assertEquals(Icrc.read(packet, bytes.length - 4), computed);
        assertEquals(IcrcReference.of(bytes, true), computed, "agrees with the naive reference");
        assertTrue(icrc.verify(packet, 0, bytes.length));
        assertTrue(e.ipVersion() == 4 ? icrc.verifyIpv4(packet, 0, bytes.length) : icrc.verifyIpv6(packet, 0, bytes.length));
    }

    @ParameterizedTest
    @MethodSource("packets")
    void icrcMasksBthByte4(Expected e) {
        byte[] bytes = Golden.bytes(e.file());
        int captured = Icrc.read(MemorySegment.ofArray(bytes), bytes.length - 4);
        assertEquals(0, bytes[e.ipHeaderLength() + UdpHeader.LENGTH + Bth.ECN_OFFSET], "byte 4 is zero on the wire");
        assertNotEquals(captured, IcrcReference.of(bytes, false), "covering byte 4 as sent does not reproduce the ICRC");
    }

    @ParameterizedTest
    @MethodSource("packets")
    void icrcComputedFromSeparateIpUdpAndBthOnwardBuffersMatches(Expected e) {
        byte[] bytes = Golden.bytes(e.file());
        int headers = e.ipHeaderLength() + UdpHeader.LENGTH;
        MemorySegment ipUdp = MemorySegment.ofArray(Arrays.copyOfRange(bytes, 0, headers));
        MemorySegment bthOnward = MemorySegment.ofArray(Arrays.copyOfRange(bytes, headers, bytes.length));
        assertEquals(Icrc.read(bthOnward, bthOnward.byteSize() - 4),
                icrc.compute(ipUdp, 0, bthOnward, 0, bytes.length - headers));
    }

    @ParameterizedTest
    @MethodSource("packets")
    void corruptingAnyCoveredByteFailsVerification(Expected e) {
        byte[] original = Golden.bytes(e.file());
        Map<Integer, Integer> masked = maskedBits(e);
        for (int position = 0; position < original.length; position++) {
            for (int flip : new int[] {0x01, 0x80, 0xFF}) {
                if ((flip & ~masked.getOrDefault(position, 0)) == 0) {
                    continue;
                }
                byte[] corrupt = original.clone();
                int at = position;
                int bits = flip & ~masked.getOrDefault(position, 0);
                corrupt[at] ^= (byte) bits;
                assertFalse(icrc.verify(MemorySegment.ofArray(corrupt), 0, corrupt.length),
                        () -> "byte " + at + " ^ 0x" + Integer.toHexString(bits) + " went unnoticed");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("packets")
    void corruptingOnlyMaskedBitsStillVerifies(Expected e) {
        byte[] original = Golden.bytes(e.file());
        for (Map.Entry<Integer, Integer> mask : maskedBits(e).entrySet()) {
            byte[] changed = original.clone();
            changed[mask.getKey()] ^= mask.getValue().byteValue();
            assertTrue(icrc.verify(MemorySegment.ofArray(changed), 0, changed.length),
                    () -> "byte " + mask.getKey() + " is masked, changing it must not matter");
        }
    }

    @Test
    void resourceCopiesMatchTheSharedReference() throws IOException {
        Optional<Path> shared = Golden.sharedDir();
        Assumptions.assumeTrue(shared.isPresent(), "shared/reference/golden not reachable from user.dir; "
                + "the copies in src/test/resources/golden are used as they are");
        for (String name : Golden.ALL) {
            byte[] original = Golden.parse(Files.readString(shared.get().resolve(name)));
            assertArrayEquals(original, Golden.bytes(name), name + " drifted from " + shared.get());
        }
    }

    /** Position -> bits the ICRC ignores: the fields WIRE.md says are set to all ones. */
    private static Map<Integer, Integer> maskedBits(Expected e) {
        Map<Integer, Integer> masked = new TreeMap<>();
        if (e.ipVersion() == 4) {
            masked.put(Ipv4Header.TOS_OFFSET, 0xFF);
            masked.put(Ipv4Header.TTL_OFFSET, 0xFF);
            masked.put(Ipv4Header.CHECKSUM_OFFSET, 0xFF);
            masked.put(Ipv4Header.CHECKSUM_OFFSET + 1, 0xFF);
        } else {
            masked.put(0, 0x0F);
            masked.put(1, 0xFF);
            masked.put(2, 0xFF);
            masked.put(3, 0xFF);
            masked.put(Ipv6Header.HOP_LIMIT_OFFSET, 0xFF);
        }
        int udp = e.ipHeaderLength();
        masked.put(udp + UdpHeader.CHECKSUM_OFFSET, 0xFF);
        masked.put(udp + UdpHeader.CHECKSUM_OFFSET + 1, 0xFF);
        masked.put(udp + UdpHeader.LENGTH + Bth.ECN_OFFSET, 0xFF);
        return masked;
    }
}

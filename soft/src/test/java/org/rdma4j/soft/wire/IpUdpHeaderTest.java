// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class IpUdpHeaderTest {

    @Test
    void ipv4WriteUdpReproducesThePeerHeaderRxeAccepted() {
        byte[] golden = Golden.bytes(Golden.PEER_IPV4_RAW_ACK);
        byte[] built = new byte[Ipv4Header.LENGTH];
        new Ipv4Header().wrap(MemorySegment.ofArray(built), 0)
                .writeUdp(0, golden.length, 0x1234, true, 64, 0x0A4D_0002, 0x0A4D_0001);
        assertArrayEquals(Arrays.copyOf(golden, Ipv4Header.LENGTH), built);
    }

    @Test
    void ipv4FieldsRoundTripWithoutDisturbingNeighbours() {
        byte[] bytes = new byte[Ipv4Header.LENGTH];
        Ipv4Header ip = new Ipv4Header().wrap(MemorySegment.ofArray(bytes), 0).writeUdp(0, 48, 1, false, 1, 0, 0);
        ip.version(4).ihl(5).tos(0xFF).totalLength(0xFFFF).identification(0xFFFF).ttl(0xFF).protocol(0xFF)
                .sourceAddress(0xC0A8_0001).destinationAddress(-1);
        ip.dontFragment(true).moreFragments(true).fragmentOffset(0x1FFF);
        assertEquals(4, ip.version());
        assertEquals(5, ip.ihl());
        assertEquals(20, ip.headerLength());
        assertEquals(0xFF, ip.tos());
        assertEquals(0xFFFF, ip.totalLength());
        assertEquals(0xFFFF, ip.identification());
        assertEquals(0xFF, ip.ttl());
        assertEquals(0xFF, ip.protocol());
        assertEquals(0xC0A8_0001, ip.sourceAddress());
        assertEquals(-1, ip.destinationAddress());
        assertTrue(ip.dontFragment());
        assertTrue(ip.moreFragments());
        assertEquals(0x1FFF, ip.fragmentOffset());
        ip.moreFragments(false);
        assertTrue(ip.dontFragment());
        assertEquals(0x1FFF, ip.fragmentOffset());
        ip.fragmentOffset(0);
        assertTrue(ip.dontFragment());
        ip.version(6);
        assertEquals(5, ip.ihl(), "version and IHL share a byte");
    }

    @Test
    void ipv4ChecksumMatchesEveryCaptureAndDetectsDamage() {
        for (String name : new String[] {Golden.IPV4_SEND_FIRST, Golden.IPV4_ACK, Golden.PEER_IPV4_RAW_ACK}) {
            byte[] bytes = Golden.bytes(name);
            Ipv4Header ip = new Ipv4Header().wrap(MemorySegment.ofArray(bytes), 0);
            assertEquals(ip.headerChecksum(), ip.computeChecksum(), name);
            assertTrue(ip.isChecksumValid(), name);
            ip.identification(ip.identification() + 1);
            assertFalse(ip.isChecksumValid(), name);
            ip.updateChecksum();
            assertTrue(ip.isChecksumValid(), name);
        }
    }

    @Test
    void ipv6WriteUdpAndAddressesReproduceTheRxeHeader() {
        byte[] golden = Golden.bytes(Golden.IPV6_ACK);
        byte[] built = new byte[Ipv6Header.LENGTH];
        Ipv6Header ip = new Ipv6Header().wrap(MemorySegment.ofArray(built), 0)
                .writeUdp(0, 0, golden.length - Ipv6Header.LENGTH, 64)
                .sourceAddress(0xFD77_0000_0000_0000L, 1L)
                .destinationAddress(golden, Ipv6Header.DESTINATION_ADDRESS_OFFSET);
        assertArrayEquals(Arrays.copyOf(golden, Ipv6Header.LENGTH), built);
        byte[] address = new byte[16];
        ip.copyDestinationAddress(address, 0);
        assertEquals(2, address[15]);
        ip.copySourceAddress(address, 0);
        assertEquals((byte) 0xFD, address[0]);
        assertEquals(1, address[15]);
        assertEquals(0xFD77_0000_0000_0000L, ip.destinationAddressHigh());
        assertEquals(2L, ip.destinationAddressLow());
    }

    @Test
    void ipv6VersionClassAndFlowLabelShareOneWordWithoutClobbering() {
        byte[] bytes = new byte[Ipv6Header.LENGTH];
        Ipv6Header ip = new Ipv6Header().wrap(MemorySegment.ofArray(bytes), 0).writeUdp(0xAB, 0xFFFFF, 1000, 255);
        assertEquals(6, ip.version());
        assertEquals(0xAB, ip.trafficClass());
        assertEquals(0xFFFFF, ip.flowLabel());
        assertEquals(1000, ip.payloadLength());
        assertEquals(Ipv6Header.NEXT_HEADER_UDP, ip.nextHeader());
        assertEquals(255, ip.hopLimit());
        ip.trafficClass(0);
        assertEquals(0xFFFFF, ip.flowLabel());
        assertEquals(6, ip.version());
        ip.flowLabel(0xFFFF_FFFF);
        assertEquals(0xFFFFF, ip.flowLabel());
        assertEquals(0, ip.trafficClass());
        ip.version(0xF).trafficClass(0xFF).flowLabel(0).nextHeader(0xFF).payloadLength(0xFFFF);
        assertEquals(0xF, ip.version());
        assertEquals(0xFF, ip.trafficClass());
        assertEquals(0, ip.flowLabel());
        assertEquals(0xFF, ip.nextHeader());
        assertEquals(0xFFFF, ip.payloadLength());
    }

    @Test
    void udpWriteReproducesTheCapturedHeaderAndFieldsRoundTrip() {
        byte[] golden = Golden.bytes(Golden.IPV4_ACK);
        byte[] built = new byte[UdpHeader.LENGTH];
        UdpHeader udp = new UdpHeader().wrap(MemorySegment.ofArray(built), 0)
                .write(0xF67E, UdpHeader.ROCE_V2_PORT, golden.length - Ipv4Header.LENGTH, 0);
        assertArrayEquals(Arrays.copyOfRange(golden, 20, 28), built);
        udp.sourcePort(0xFFFF).destinationPort(4791).length(0xFFFF).checksum(0x8000);
        assertEquals(0xFFFF, udp.sourcePort());
        assertEquals(4791, udp.destinationPort());
        assertEquals(0xFFFF, udp.length());
        assertEquals(0x8000, udp.checksum());
        assertEquals(4791, UdpHeader.ROCE_V2_PORT);
    }
}

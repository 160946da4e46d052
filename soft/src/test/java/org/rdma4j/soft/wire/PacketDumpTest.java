// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class PacketDumpTest {

    @Test
    void decodesAnIpv4SendFirstOnOneLine() {
        byte[] p = Golden.bytes(Golden.IPV4_SEND_FIRST);
        String line = PacketDump.packet(MemorySegment.ofArray(p), 0, p.length);
        assertEquals("IPv4 10.77.0.1 > 10.77.0.2 id=0x4967 tos=0x00 ttl=64 UDP 63102 > 4791 | "
                + "RC_SEND_FIRST qpn=0x000abc psn=0x6122ee pkey=0xffff payload=1024 icrc=0x09e5bf27", line);
    }

    @Test
    void decodesAnIpv6AckWithItsAeth() {
        byte[] p = Golden.bytes(Golden.IPV6_ACK);
        String line = PacketDump.packet(MemorySegment.ofArray(p), 0, p.length);
        assertTrue(line.startsWith("IPv6 fd77:0:0:0:0:0:0:1 > fd77:0:0:0:0:0:0:2"), line);
        assertTrue(line.contains("RC_ACKNOWLEDGE qpn=0x000abc psn=0x000126"), line);
        assertTrue(line.contains("AETH ACK credits=31 msn=1"), line);
    }

    @Test
    void namesSyndromes() {
        assertEquals("RNR_NAK timer=12", PacketDump.syndrome(Aeth.rnrNak(12)));
        assertEquals("NAK PSN_SEQ_ERR", PacketDump.syndrome(Aeth.NAK_PSN_SEQ_ERR));
        assertEquals("NAK REMOTE_ACCESS", PacketDump.syndrome(Aeth.NAK_REMOTE_ACCESS));
        assertEquals("NAK code=9", PacketDump.syndrome(0x69));
        assertEquals("RESERVED_SYNDROME 0x40", PacketDump.syndrome(0x40));
    }

    @Test
    void decodesEveryExtensionHeaderItFinds() {
        byte[] p = new byte[Opcode.headerLength(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE) + 5 + 3 + Icrc.LENGTH];
        MemorySegment s = MemorySegment.ofArray(p);
        new Bth().wrap(s, 0).write(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, true, 3, 0xFFFF, 7, true, 9);
        new Reth().wrap(s, Opcode.offsetOf(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.HEADER_RETH))
                .virtualAddress(0x1000).rkey(0x42).dmaLength(5);
        new ImmDt().wrap(s, Opcode.offsetOf(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.HEADER_IMM_DT))
                .immediate(0xCAFE);
        String line = PacketDump.bthOnward(s, 0, p.length);
        assertTrue(line.startsWith("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE qpn=0x000007 psn=0x000009 pkey=0xffff SE ackreq"), line);
        assertTrue(line.contains("RETH va=0x1000 rkey=0x00000042 len=5 imm=0x0000cafe payload=5 pad=3"), line);
    }

    @Test
    void reportsMalformedPacketsInsteadOfThrowing() {
        MemorySegment s = MemorySegment.ofArray(new byte[8]);
        assertTrue(PacketDump.bthOnward(s, 0, 8).startsWith("truncated"));
        assertTrue(PacketDump.packet(s, 0, 100).startsWith("truncated"));
        assertTrue(PacketDump.packet(s, 0, 8).startsWith("not IPv4/IPv6"));
        byte[] invalid = new byte[16];
        invalid[0] = 0x15;
        assertEquals("INVALID_0x15 qpn=0x000000 psn=0x000000 pkey=0x0000",
                PacketDump.bthOnward(MemorySegment.ofArray(invalid), 0, 16));
    }
}

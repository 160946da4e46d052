// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import java.lang.foreign.MemorySegment;

/**
 * One-line, human-readable decodes of RoCEv2 packets for logs and debuggers, e.g.
 * <pre>
 * IPv4 10.77.0.1 > 10.77.0.2 id=0x4967 UDP 63102 > 4791 | RC_SEND_FIRST qpn=0x000abc psn=0x6122ee pkey=0xffff payload=1024 icrc=0x09e5bf27
 * </pre>
 *
 * <p>Allocates freely: not for the data path. Stateless; safe for any number of threads.
 */
public final class PacketDump {
    private PacketDump() {
    }

    /**
     * Decodes a whole IPv4 or IPv6 packet.
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IP header starts
     * @param packetLength bytes from {@code ipOffset} through the ICRC
     * @return the decode; malformed parts are reported, never thrown
     */
    public static String packet(MemorySegment packet, long ipOffset, int packetLength) {
        if (packetLength < 1 || ipOffset + packetLength > packet.byteSize()) {
            return "truncated: " + packetLength + " bytes";
        }
        StringBuilder out = new StringBuilder();
        int version = (packet.get(BigEndian.BYTE, ipOffset) & 0xF0) >>> 4;
        int ipHeaderLength;
        if (version == Ipv4Header.VERSION && packetLength >= Ipv4Header.LENGTH) {
            Ipv4Header ip = new Ipv4Header().wrap(packet, ipOffset);
            ipHeaderLength = ip.headerLength();
            out.append("IPv4 ").append(ipv4(ip.sourceAddress())).append(" > ").append(ipv4(ip.destinationAddress()))
                    .append(String.format(" id=0x%04x tos=0x%02x ttl=%d", ip.identification(), ip.tos(), ip.ttl()));
        } else if (version == Ipv6Header.VERSION && packetLength >= Ipv6Header.LENGTH) {
            Ipv6Header ip = new Ipv6Header().wrap(packet, ipOffset);
            ipHeaderLength = Ipv6Header.LENGTH;
            out.append("IPv6 ").append(ipv6(ip.sourceAddressHigh(), ip.sourceAddressLow())).append(" > ")
                    .append(ipv6(ip.destinationAddressHigh(), ip.destinationAddressLow()))
                    .append(String.format(" tc=0x%02x hop=%d", ip.trafficClass(), ip.hopLimit()));
        } else {
            return "not IPv4/IPv6: version " + version + ", " + packetLength + " bytes";
        }
        if (packetLength < ipHeaderLength + UdpHeader.LENGTH) {
            return out.append(" truncated").toString();
        }
        UdpHeader udp = new UdpHeader().wrap(packet, ipOffset + ipHeaderLength);
        out.append(" UDP ").append(udp.sourcePort()).append(" > ").append(udp.destinationPort()).append(" | ");
        int headers = ipHeaderLength + UdpHeader.LENGTH;
        return out.append(bthOnward(packet, ipOffset + headers, packetLength - headers)).toString();
    }

    /**
     * Decodes BTH-onward bytes.
     *
     * @param packet    holds the packet
     * @param bthOffset where the BTH starts
     * @param bthLength bytes from the BTH through the ICRC
     * @return the decode; malformed parts are reported, never thrown
     */
    public static String bthOnward(MemorySegment packet, long bthOffset, int bthLength) {
        if (bthLength < Bth.LENGTH || bthOffset + bthLength > packet.byteSize()) {
            return "truncated BTH: " + bthLength + " bytes";
        }
        Bth bth = new Bth().wrap(packet, bthOffset);
        int op = bth.opcode();
        StringBuilder out = new StringBuilder(Opcode.name(op));
        out.append(String.format(" qpn=0x%06x psn=0x%06x pkey=0x%04x", bth.destQpn(), bth.psn(), bth.pkey()));
        if (bth.solicitedEvent()) {
            out.append(" SE");
        }
        if (bth.ackReq()) {
            out.append(" ackreq");
        }
        if (bth.fecn() || bth.becn()) {
            out.append(bth.fecn() ? " FECN" : "").append(bth.becn() ? " BECN" : "");
        }
        if (!Opcode.isValid(op)) {
            return out.toString();
        }
        int headerLength = Opcode.headerLength(op);
        int payload = bthLength - headerLength - bth.padCount() - Icrc.LENGTH;
        if (payload < 0) {
            return out.append(" truncated: ").append(bthLength).append(" bytes").toString();
        }
        appendExtensionHeaders(out, packet, bthOffset, op);
        if (Opcode.hasPayload(op)) {
            out.append(" payload=").append(payload);
            if (bth.padCount() != 0) {
                out.append(" pad=").append(bth.padCount());
            }
        }
        out.append(String.format(" icrc=0x%08x", Icrc.read(packet, bthOffset + bthLength - Icrc.LENGTH)));
        return out.toString();
    }

    private static void appendExtensionHeaders(StringBuilder out, MemorySegment packet, long bthOffset, int op) {
        if (Opcode.hasDeth(op)) {
            Deth deth = new Deth().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_DETH));
            out.append(String.format(" DETH qkey=0x%08x srcqp=0x%06x", deth.qkey(), deth.srcQpn()));
        }
        if (Opcode.hasReth(op)) {
            Reth reth = new Reth().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_RETH));
            out.append(String.format(" RETH va=0x%x rkey=0x%08x len=%d",
                    reth.virtualAddress(), reth.rkey(), Integer.toUnsignedLong(reth.dmaLength())));
        }
        if (Opcode.hasAtomicEth(op)) {
            AtomicEth atomic = new AtomicEth().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH));
            out.append(String.format(" AtomicETH va=0x%x rkey=0x%08x swap/add=0x%x compare=0x%x",
                    atomic.virtualAddress(), atomic.rkey(), atomic.swapAdd(), atomic.compare()));
        }
        if (Opcode.hasAeth(op)) {
            Aeth aeth = new Aeth().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_AETH));
            out.append(" AETH ").append(syndrome(aeth.syndrome())).append(" msn=").append(aeth.msn());
        }
        if (Opcode.hasAtomicAckEth(op)) {
            AtomicAckEth ack = new AtomicAckEth().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ACK_ETH));
            out.append(String.format(" orig=0x%x", ack.originalValue()));
        }
        if (Opcode.hasImmDt(op)) {
            ImmDt imm = new ImmDt().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_IMM_DT));
            out.append(String.format(" imm=0x%08x", imm.immediate()));
        }
        if (Opcode.hasIeth(op)) {
            Ieth ieth = new Ieth().wrap(packet, bthOffset + Opcode.offsetOf(op, Opcode.HEADER_IETH));
            out.append(String.format(" inv_rkey=0x%08x", ieth.rkey()));
        }
    }

    /**
     * {@return e.g. {@code "ACK credits=31"}, {@code "RNR_NAK timer=12"}, {@code "NAK PSN_SEQ_ERR"}}
     *
     * @param syndrome an AETH syndrome
     */
    public static String syndrome(int syndrome) {
        if (Aeth.isAck(syndrome)) {
            return "ACK credits=" + Aeth.credits(syndrome);
        }
        if (Aeth.isRnrNak(syndrome)) {
            return "RNR_NAK timer=" + Aeth.rnrTimerCode(syndrome);
        }
        if (Aeth.isNak(syndrome)) {
            return switch (syndrome & 0xFF) {
                case Aeth.NAK_PSN_SEQ_ERR -> "NAK PSN_SEQ_ERR";
                case Aeth.NAK_INVALID_REQUEST -> "NAK INVALID_REQUEST";
                case Aeth.NAK_REMOTE_ACCESS -> "NAK REMOTE_ACCESS";
                case Aeth.NAK_REMOTE_OP -> "NAK REMOTE_OP";
                default -> "NAK code=" + Aeth.nakCode(syndrome);
            };
        }
        return String.format("RESERVED_SYNDROME 0x%02x", syndrome & 0xFF);
    }

    private static String ipv4(int address) {
        return (address >>> 24) + "." + (address >>> 16 & 0xFF) + "." + (address >>> 8 & 0xFF) + "." + (address & 0xFF);
    }

    private static String ipv6(long high, long low) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            long word = i < 4 ? high >>> (48 - 16 * i) : low >>> (48 - 16 * (i - 4));
            if (i > 0) {
                out.append(':');
            }
            out.append(Long.toHexString(word & 0xFFFF));
        }
        return out.toString();
    }
}

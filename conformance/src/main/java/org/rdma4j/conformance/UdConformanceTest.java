// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Data path, "UD": a 40-byte GRH precedes the payload in the receive buffer; a
 * message is at most one MTU (the port's); wrong Q_Keys are dropped silently; nothing is ever
 * retransmitted.
 */
@Rule({"S-UD-1", "S-UD-2", "S-UD-3", "S-UD-4", "S-UD-5"})
@Requires(value = Capability.RELIABLE_LINK, why = "UD never retransmits: on a lossy link a datagram may be lost")
public class UdConformanceTest extends AbstractDataPathTest {
    protected static final int GRH = 40;

    private int udMtu() {
        return Math.min(portAttr().activeMtu().bytes(), peer().queryPort(1).activeMtu().bytes());
    }

    /** Size code: -1 = MTU - 1, -2 = MTU; else the size itself. */
    private int size(int code) {
        return switch (code) {
            case -1 -> udMtu() - 1;
            case -2 -> udMtu();
            default -> code;
        };
    }

    private WorkCompletion sendUd(QpPair p, long wrId, MemoryRegion src, int len, int qkey) {
        SendWorkRequest w = wr(wrId, WrOpcode.SEND).ud(p.a().ahToPeer(), p.b().qpn(), qkey);
        if (len > 0) {
            w.sge(src, 0, len);
        }
        p.a().qp().postSend(w);
        return expect(p.a().sendCq(), wrId, WcOpcode.SEND);
    }

    @ParameterizedTest(name = "size code {0}")
    @ValueSource(ints = {0, 1, 100, -1, -2})
    void sendPutsTheGrhFirstAndThePayloadAtOffset40(int code) {
        int size = size(code);
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), size + 64L, MR_ALL);
        MemoryRegion dst = register(p.b(), size + GRH + 128L, MR_ALL);
        fillPattern(src.segment(), 0, size, 80 + code);
        postRecv(p.b(), 1, dst, 0, size + GRH);
        WorkCompletion s = sendUd(p, 2, src, size, p.spec().qkey());
        assertEquals(p.a().qpn(), s.qpNum());
        WorkCompletion r = expect(p.b().recvCq(), 1, WcOpcode.RECV);
        assertEquals(size + GRH, r.byteLen(), () -> "byte_len counts the GRH: " + r);
        assertTrue((r.wcFlags() & WcFlag.GRH) != 0, () -> "GRH flag: " + r);
        assertEquals(p.a().qpn(), r.srcQp(), "src_qp");
        assertEquals(p.b().qpn(), r.qpNum(), "qp_num");
        assertImm(r, false);
        assertPattern(dst.segment(), GRH, size, 80 + code, "payload after the GRH");
        assertGuard(dst.segment(), GRH + size, dst.length(), "after the payload");
    }

    @Test
    void sendWithImmediateReportsTheImmediate() {
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        fillPattern(src.segment(), 0, 100, 85);
        postRecv(p.b(), 1, dst, 0, 100 + GRH);
        p.a().qp().postSend(p.toB(wr(2, WrOpcode.SEND_WITH_IMM).immData(IMM).sge(src, 0, 100)));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        WorkCompletion r = expect(p.b().recvCq(), 1, WcOpcode.RECV);
        assertImm(r, true);
        assertEquals(100 + GRH, r.byteLen());
        assertPattern(dst.segment(), GRH, 100, 85, "payload");
    }

    @Test
    void grhCanGoToItsOwnScatterEntry() {
        QpPair p = connect(spec(QpType.UD).cap(new QpCap(16, 16, 2, 2, 0)));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion grh = register(p.b(), 64, MR_ALL);
        MemoryRegion payload = register(p.b(), 512, MR_ALL);
        fillPattern(src.segment(), 0, 200, 86);
        p.b().qp().postRecv(new RecvWorkRequest().wrId(1).sge(grh, 0, GRH).sge(payload, 0, 256));
        sendUd(p, 2, src, 200, p.spec().qkey());
        assertEquals(200 + GRH, expect(p.b().recvCq(), 1, WcOpcode.RECV).byteLen());
        assertPattern(payload.segment(), 0, 200, 86, "payload in the second scatter entry");
        assertGuard(payload.segment(), 200, payload.length(), "after the payload");
        assertGuard(grh.segment(), GRH, grh.length(), "after the GRH");
    }

    /**
     * IBTA C10-93.1.1: a UD message longer than the MTU emits no packet and raises no error, so the send
     * completes successfully (rxe "fakes a successful UD send"); the QP keeps working.
     */
    @Test
    void messageLargerThanTheMtuCompletesButIsNotSent() {
        QpPair p = connect(spec(QpType.UD));
        int size = udMtu() + 1;
        MemoryRegion src = register(p.a(), size, MR_ALL);
        MemoryRegion dst = register(p.b(), size + GRH + 64L, MR_ALL);
        postRecv(p.b(), 1, dst, 0, size + GRH);
        p.a().qp().postSend(p.toB(wr(2, WrOpcode.SEND).sge(src, 0, size)));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        assertNoCompletion(p.b().recvCq(), "a UD message above the MTU must not arrive");
        assertQpState(p.a().qp(), QpState.RTS);
        fillPattern(src.segment(), 0, 64, 89);
        sendUd(p, 3, src, 64, p.spec().qkey());
        expect(p.b().recvCq(), 1, WcOpcode.RECV);
        assertPattern(dst.segment(), GRH, 64, 89, "the next message");
    }

    /**
     * An address handle must come from the QP's PD. rxe looks the AH up when it builds the packet
     * (rxe_get_av): one of another PD gives no address, the WR completes LOC_QP_OP_ERR and the QP goes to
     * ERR; nothing is sent.
     */
    @Test
    void sendWithAnAddressHandleOfAnotherPdFailsWithLocalQpOperationError() {
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64 + GRH);
        ProtectionDomain other = allocPd(ctx);
        AddressHandle ah = track(other.createAh(AhAttr.roce(p.b().gid(), p.a().gidIndex())));
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 64).ud(ah, p.b().qpn(), p.spec().qkey()));
        expect(p.a().sendCq(), 2, WcStatus.LOC_QP_OP_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertNoCompletion(p.b().recvCq(), "nothing was sent");
    }

    /**
     * A datagram that does not fit the posted receive (GRH included) costs that receive at most (rxe
     * drops it and keeps the receive; others complete it with an error) and never stops the UD QP.
     */
    @ParameterizedTest(name = "srq {0}")
    @ValueSource(booleans = {false, true})
    void datagramTooLongForTheReceiveLeavesTheUdQpWorking(boolean withSrq) {
        PairSpec s = spec(QpType.UD);
        SharedReceiveQueue srq = null;
        if (withSrq) {
            ProtectionDomain pdB = allocPd(peer());
            srq = track(pdB.createSrq(new SrqAttr(16, 1, 0)));
            s.pdB(pdB).srqB(srq);
        }
        QpPair p = connect(s);
        MemoryRegion src = register(p.a(), 512, MR_ALL);
        MemoryRegion dst = register(p.b(), 1024, MR_ALL);
        for (int i = 1; i <= 2; i++) {
            RecvWorkRequest r = new RecvWorkRequest().wrId(i).sge(dst, (i - 1) * 512L, 64 + GRH);
            if (withSrq) {
                srq.postRecv(r);
            } else {
                p.b().qp().postRecv(r);
            }
        }
        sendUd(p, 3, src, 200, p.spec().qkey());
        fillPattern(src.segment(), 0, 64, 90);
        sendUd(p, 4, src, 64, p.spec().qkey());
        WorkCompletion first = pollOne(p.b().recvCq());
        long off = 0;
        if (first.status() != WcStatus.SUCCESS) {
            assertEquals(1, first.wrId(), () -> "only the first receive may be used up: " + first);
            first.copyFrom(expect(p.b().recvCq(), 2, WcOpcode.RECV));
            off = 512;
        } else {
            assertEquals(1, first.wrId(), () -> "the dropped datagram kept the first receive: " + first);
        }
        assertEquals(64 + GRH, first.byteLen());
        assertPattern(dst.segment(), off + GRH, 64, 90, "the datagram after the one too long");
        assertQpState(p.b().qp(), QpState.RTS);
    }

    /**
     * The GRH area holds the packet's network header as it was on the wire (rxe copies ip_hdr /
     * ipv6_hdr): IPv4 in the last 20 bytes with its real total length, TTL = the sender's hop limit,
     * TOS = its traffic class and a valid checksum; IPv6 with payload length, hop limit and traffic
     * class (the flow label is not checked: it does not cross a UDP socket). Both carry the sender's and
     * receiver's addresses. The work completion says which layout it is.
     */
    @Test
    void grhAreaHoldsThePacketsRealNetworkHeader() {
        QpPair p = connect(spec(QpType.UD));
        int hop = 7;
        int tclass = 0x20;
        int flow = 0x12345;
        AddressHandle ah = track(p.a().pd().createAh(new AhAttr(
                new GlobalRoute(p.b().gid(), flow, p.a().gidIndex(), hop, tclass), 0, 0, 0, 0, 1)));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        int size = 101;
        postRecv(p.b(), 1, dst, 0, size + GRH);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, size).ud(ah, p.b().qpn(), p.spec().qkey()));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        WorkCompletion r = expect(p.b().recvCq(), 1, WcOpcode.RECV);
        MemorySegment g = dst.segment();
        boolean fields = setup.has(Capability.HOP_LIMIT_AND_CLASS); // else see hopLimitAndTrafficClassReachTheReceiver
        // UDP header + BTH + DETH + payload + pad + ICRC
        int udpLength = 8 + 12 + 8 + size + ((4 - (size & 3)) & 3) + 4;
        if (p.a().gid().isIpv4Mapped()) {
            assertEquals(NetworkHeaderType.IPV4, r.networkHdrType(), r::toString);
            assertGuardless(g, 0, 20, "the first 20 bytes of an IPv4 GRH area are zero");
            assertEquals(0x45, u8(g, 20), "version and IHL");
            if (fields) {
                assertEquals(tclass, u8(g, 21), "TOS = the sender's traffic class");
            }
            assertEquals(20 + udpLength, u16(g, 22), "total length");
            if (fields) {
                assertEquals(hop, u8(g, 28), "TTL = the sender's hop limit");
            }
            assertEquals(17, u8(g, 29), "protocol UDP");
            long sum = 0;
            for (int i = 0; i < 20; i += 2) {
                sum += u16(g, 20 + i);
            }
            sum = (sum & 0xFFFF) + (sum >>> 16);
            assertEquals(0xFFFF, (int) ((sum & 0xFFFF) + (sum >>> 16)), "IPv4 header checksum");
            for (int i = 0; i < 4; i++) {
                assertEquals(p.a().gid().byteAt(12 + i), g.get(ValueLayout.JAVA_BYTE, 32 + i), "source address");
                assertEquals(p.b().gid().byteAt(12 + i), g.get(ValueLayout.JAVA_BYTE, 36 + i), "destination address");
            }
        } else {
            assertEquals(NetworkHeaderType.IPV6, r.networkHdrType(), r::toString);
            int vtf = u16(g, 0) << 16 | u16(g, 2);
            assertEquals(6, vtf >>> 28, "version");
            if (fields) {
                assertEquals(tclass, (vtf >>> 20) & 0xFF, "traffic class");
            }
            assertEquals(udpLength, u16(g, 4), "payload length");
            assertEquals(17, u8(g, 6), "next header UDP");
            if (fields) {
                assertEquals(hop, u8(g, 7), "hop limit");
            }
            for (int i = 0; i < 16; i++) {
                assertEquals(p.a().gid().byteAt(i), g.get(ValueLayout.JAVA_BYTE, 8 + i), "source address");
                assertEquals(p.b().gid().byteAt(i), g.get(ValueLayout.JAVA_BYTE, 24 + i), "destination address");
            }
        }
    }

    /** ibv_create_ah_from_wc: a UD server answers whoever wrote to it from the WC and GRH alone. */
    @Test
    void serverAnswersTheSenderWithAnAddressHandleFromTheWorkCompletion() {
        QpPair p = connect(spec(QpType.UD));
        AddressHandle ah = track(p.a().pd().createAh(new AhAttr(
                new GlobalRoute(p.b().gid(), 0, p.a().gidIndex(), 9, 0x08), 0, 0, 0, 0, 1)));
        MemoryRegion aBuf = register(p.a(), 512, MR_ALL);
        MemoryRegion bBuf = register(p.b(), 512, MR_ALL);
        postRecv(p.b(), 1, bBuf, 0, 64 + GRH);
        postRecv(p.a(), 2, aBuf, 256, 64 + GRH);
        fillPattern(aBuf.segment(), 0, 64, 91);
        p.a().qp().postSend(wr(3, WrOpcode.SEND).sge(aBuf, 0, 64).ud(ah, p.b().qpn(), p.spec().qkey()));
        expect(p.a().sendCq(), 3, WcOpcode.SEND);
        WorkCompletion r = expect(p.b().recvCq(), 1, WcOpcode.RECV);

        MemorySegment grh = bBuf.segment().asSlice(0, GRH);
        AhAttr back = AhAttr.fromWc(p.b().ctx(), 1, r, grh);
        assertTrue(back.isGlobal(), back::toString);
        assertEquals(p.a().gid(), back.grh().dgid(), "dgid = the packet's source");
        assertEquals(p.b().gid(), p.b().ctx().queryGid(1, back.grh().sgidIndex()), "sgid = the packet's destination");
        if (setup.has(Capability.HOP_LIMIT_AND_CLASS)) { // else see hopLimitAndTrafficClassReachTheReceiver
            assertEquals(9, back.grh().hopLimit(), "hop limit as received");
            assertEquals(0x08, back.grh().trafficClass(), "traffic class as received");
        }
        assertEquals(1, back.portNum());

        AddressHandle reply = track(p.b().pd().createAhFromWc(r, grh, 1));
        fillPattern(bBuf.segment(), GRH, 64, 92);
        p.b().qp().postSend(wr(4, WrOpcode.SEND).sge(bBuf, GRH, 64).ud(reply, r.srcQp(), p.spec().qkey()));
        expect(p.b().sendCq(), 4, WcOpcode.SEND);
        WorkCompletion answer = expect(p.a().recvCq(), 2, WcOpcode.RECV);
        assertEquals(p.b().qpn(), answer.srcQp());
        assertPattern(aBuf.segment(), 256 + GRH, 64, 92, "the answer");
    }

    /** The hop limit and traffic class of the sender's AH reach the receiver's GRH area (rxe: ip_hdr / ipv6_hdr). */
    @Test
    @Requires(value = Capability.HOP_LIMIT_AND_CLASS, why = "the link does not show the receiver a packet's hop limit and traffic class")
    void hopLimitAndTrafficClassReachTheReceiver() {
        QpPair p = connect(spec(QpType.UD));
        AddressHandle ah = track(p.a().pd().createAh(new AhAttr(
                new GlobalRoute(p.b().gid(), 0, p.a().gidIndex(), 5, 0x48), 0, 0, 0, 0, 1)));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 16 + GRH);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 16).ud(ah, p.b().qpn(), p.spec().qkey()));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        WorkCompletion r = expect(p.b().recvCq(), 1, WcOpcode.RECV);
        AhAttr back = AhAttr.fromWc(p.b().ctx(), 1, r, dst.segment().asSlice(0, GRH));
        assertEquals(5, back.grh().hopLimit(), "hop limit as received");
        assertEquals(0x48, back.grh().trafficClass(), "traffic class as received");
    }

    /** rdma-core's get_grh_header_version: neither an IPv6 nor an IPv4 header is EPROTONOSUPPORT. */
    @Test
    void ahFromAGrhAreaThatIsNoNetworkHeaderIsEprotonosupport() {
        WorkCompletion wc = new WorkCompletion();
        wc.set(1, WcStatus.SUCCESS, WcOpcode.RECV, GRH, 0x11, WcFlag.GRH, 0, 0, 0x12, 0);
        MemorySegment zeros = allocate(GRH).fill((byte) 0);
        assertErrno(Errno.EPROTONOSUPPORT, () -> AhAttr.fromWc(ctx, 1, wc, zeros));
        assertErrno(Errno.EINVAL, () -> AhAttr.fromWc(ctx, 1, wc, zeros.asSlice(0, 20)));
        wc.set(1, WcStatus.SUCCESS, WcOpcode.RECV, GRH, 0x11, 0, 0, 0, 0x12, 0);
        assertTrue(!AhAttr.fromWc(ctx, 1, wc, zeros).isGlobal(), "no GRH flag: not global");
    }

    private static int u8(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
    }

    private static int u16(MemorySegment s, long at) {
        return u8(s, at) << 8 | u8(s, at + 1);
    }

    private static void assertGuardless(MemorySegment s, long from, long to, String what) {
        for (long i = from; i < to; i++) {
            assertEquals(0, s.get(ValueLayout.JAVA_BYTE, i), what);
        }
    }

    @Test
    void wrongQkeyIsDroppedSilently() {
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64 + GRH);
        fillPattern(src.segment(), 0, 64, 87);
        WorkCompletion s = sendUd(p, 2, src, 64, p.spec().qkey() + 1);
        assertEquals(WcStatus.SUCCESS, s.status(), "the sender is not told");
        assertNoCompletion(p.b().recvCq(), "a wrong Q_Key must not be delivered");
        fillPattern(src.segment(), 0, 64, 88);
        sendUd(p, 3, src, 64, p.spec().qkey());
        expect(p.b().recvCq(), 1, WcOpcode.RECV);
        assertPattern(dst.segment(), GRH, 64, 88, "the receive was not used up by the dropped message");
    }

    @Test
    void udNeverRetransmitsADroppedMessage() {
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        WorkCompletion s = sendUd(p, 1, src, 64, p.spec().qkey()); // no receive posted: dropped
        assertEquals(WcStatus.SUCCESS, s.status());
        // The send completes when it leaves; over a network it may still be in flight. Let it land first.
        assertNoCompletion(p.b().recvCq(), "nothing can be received without a receive posted");
        postRecv(p.b(), 2, dst, 0, 64 + GRH);
        assertNoCompletion(p.b().recvCq(), "the dropped message is never sent again");
    }

    @Test
    void sendToAQpThatDoesNotExistCompletes() {
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        int nobody = p.b().qpn() ^ 0x800000;
        assertNotEquals(p.a().qpn(), nobody);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 64).ud(p.a().ahToPeer(), nobody, p.spec().qkey()));
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
    }

    @Test
    void receiveWithoutRoomForTheGrhDoesNotDeliverThePayload() {
        QpPair p = connect(spec(QpType.UD));
        MemoryRegion src = register(p.a(), 256, MR_ALL);
        MemoryRegion dst = register(p.b(), 512, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 100); // room for the payload but not for GRH + payload
        sendUd(p, 2, src, 100, p.spec().qkey());
        WorkCompletion[] wc = WorkCompletion.array(1);
        long deadline = System.nanoTime() + QUIET_MS * 1_000_000L;
        while (System.nanoTime() < deadline) {
            if (p.b().recvCq().poll(wc) == 1) {
                assertNotEquals(WcStatus.SUCCESS, wc[0].status(), "a receive too short for GRH + payload: " + wc[0]);
                return;
            }
            Thread.yield();
        }
    }

    @Test
    void oneUdQpReceivesFromSeveralSenders() {
        QpPair p1 = connect(spec(QpType.UD));
        MemoryRegion dst = register(p1.b(), 1024, MR_ALL);
        // a second sender on the device under test, addressed to the same receiver
        QpPair p2 = connect(spec(QpType.UD));
        MemoryRegion src = register(p1.a(), 256, MR_ALL);
        MemoryRegion src2 = register(p2.a(), 256, MR_ALL);
        postRecv(p1.b(), 1, dst, 0, 64 + GRH);
        postRecv(p1.b(), 2, dst, 512, 64 + GRH);
        sendUd(p1, 3, src, 64, p1.spec().qkey());
        p2.a().qp().postSend(wr(4, WrOpcode.SEND).sge(src2, 0, 64).ud(p2.a().ahToPeer(), p1.b().qpn(), DEFAULT_QKEY));
        expect(p2.a().sendCq(), 4, WcOpcode.SEND);
        WorkCompletion r1 = expect(p1.b().recvCq(), 1, WcOpcode.RECV);
        WorkCompletion r2 = expect(p1.b().recvCq(), 2, WcOpcode.RECV);
        assertEquals(p1.a().qpn(), r1.srcQp());
        assertEquals(p2.a().qpn(), r2.srcQp());
    }

    /**
     * A controlled Q_Key (bit 31) is EPERM for an unprivileged process, at RESET -> INIT and later, and
     * the QP keeps its state and Q_Key; the kernel lets a privileged one (CAP_NET_RAW, or the system's
     * privileged-qkey mode) set it. The soft device treats every caller as unprivileged.
     */
    @Rule("S-QP-10")
    @Test
    void controlledQkeyFailsEpermUnlessTheProcessIsPrivileged() {
        QueuePair ud = createQp(allocPd(ctx), new QpInitAttr(QpType.UD, createCq(ctx, 4), createCq(ctx, 4))
                .cap(new QpCap(4, 4, 1, 1, 0)));
        int init = QpAttrMask.STATE | QpBringUp.initRequired(QpType.UD);
        if (setup.controlledQkeyAllowed()) {
            ud.modify(QpBringUp.initAttr(0, 0x80010000), init);
            assertEquals(0x80010000, ud.query().qkey, "a privileged process sets a controlled Q_Key");
            return;
        }
        assertErrno(Errno.EPERM, () -> ud.modify(QpBringUp.initAttr(0, 0x80010000), init));
        assertQpState(ud, QpState.RESET);
        ud.modify(QpBringUp.initAttr(0, 0x7FFFFFFF), init);
        assertErrno(Errno.EPERM, () -> ud.modify(new QpAttr().qkey(0x80000000), QpAttrMask.QKEY));
        assertEquals(0x7FFFFFFF, ud.query().qkey, "the refused modify keeps the Q_Key");
        assertQpState(ud, QpState.INIT);
    }
}

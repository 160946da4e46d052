package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
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
public abstract class UdConformanceTest extends AbstractDataPathTest {
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

    @Test
    void messageLargerThanTheMtuIsNotSent() {
        QpPair p = connect(spec(QpType.UD));
        int size = udMtu() + 1;
        MemoryRegion src = register(p.a(), size, MR_ALL);
        MemoryRegion dst = register(p.b(), size + GRH + 64L, MR_ALL);
        postRecv(p.b(), 1, dst, 0, size + GRH);
        try {
            p.a().qp().postSend(p.toB(wr(2, WrOpcode.SEND).sge(src, 0, size)));
            pollOne(p.a().sendCq()); // some providers refuse at post time, others complete the WR
        } catch (PostException e) {
            assertEquals(Errno.name(Errno.EINVAL), Errno.name(e.errno()), e.getMessage());
        }
        assertNoCompletion(p.b().recvCq(), "a UD message above the MTU must not arrive");
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
}

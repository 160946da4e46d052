// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.SrqAttrMask;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Control path, "SRQ". The SRQ is on the peer (B), A sends to it. */
@Rule({"S-SRQ-1", "S-SRQ-2", "S-SRQ-3"})
public class SharedReceiveQueueConformanceTest extends AbstractVerbsTest {

    @Test
    void createdSrqReportsAtLeastTheRequest() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(16, 2, 0)));
        SrqAttr a = srq.query();
        assertTrue(a.maxWr() >= 16, a.toString());
        assertTrue(a.maxSge() >= 2, a.toString());
        assertEquals(0, a.srqLimit());
        assertSame(pd, srq.pd());
    }

    /** rxe_srq_chk_init raises max_sge 0 to its minimum of one (RXE_MIN_SRQ_SGE) rather than refusing. */
    @Test
    void srqWithMaxSgeZeroGetsOneScatterEntry() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 0, 0)));
        assertTrue(srq.query().maxSge() >= 1, srq.query().toString());
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        srq.postRecv(new RecvWorkRequest().wrId(1).sge(mr, 0, 64));
    }

    /** rxe_srq_chk_attr: an armed limit must stay within max_wr, whichever of the two a modify changes. */
    @Test
    void resizeBelowTheArmedLimitOrLimitAboveMaxWrFailsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(16, 1, 0)));
        srq.modify(new SrqAttr(0, 0, 10), SrqAttrMask.LIMIT);
        int maxWr = srq.query().maxWr();
        assertErrno(Errno.EINVAL, () -> srq.modify(new SrqAttr(8, 0, 0), SrqAttrMask.MAX_WR));
        assertEquals(maxWr, srq.query().maxWr(), "max_wr unchanged");
        assertEquals(10, srq.query().srqLimit(), "limit still armed");
        srq.modify(new SrqAttr(10, 0, 0), SrqAttrMask.MAX_WR); // down to the limit is fine
        assertTrue(srq.query().maxWr() >= 10);
        int now = srq.query().maxWr();
        if (now < deviceAttr().maxSrqWr()) {
            assertErrno(Errno.EINVAL, () -> srq.modify(new SrqAttr(0, 0, now + 1), SrqAttrMask.LIMIT));
            assertEquals(10, srq.query().srqLimit(), "limit unchanged");
        }
        srq.modify(new SrqAttr(0, 0, 0), SrqAttrMask.LIMIT); // disarmed: any size again
        srq.modify(new SrqAttr(4, 0, 0), SrqAttrMask.MAX_WR);
        assertTrue(srq.query().maxWr() >= 4);
    }

    @Test
    void srqNumbersAreDistinct() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue s1 = track(pd.createSrq(new SrqAttr(4, 1, 0)));
        SharedReceiveQueue s2 = track(pd.createSrq(new SrqAttr(4, 1, 0)));
        assertNotEquals(s1.srqn(), s2.srqn());
    }

    @Test
    void srqAboveDeviceLimitsFailsEinval() {
        DeviceAttr d = deviceAttr();
        ProtectionDomain pd = allocPd(ctx);
        if (d.maxSrqWr() < Integer.MAX_VALUE) {
            assertErrno(Errno.EINVAL, () -> track(pd.createSrq(new SrqAttr(d.maxSrqWr() + 1, 1, 0))));
        }
        if (d.maxSrqSge() < Integer.MAX_VALUE) {
            assertErrno(Errno.EINVAL, () -> track(pd.createSrq(new SrqAttr(4, d.maxSrqSge() + 1, 0))));
        }
    }

    @Test
    void twoQpsSharingOneSrqBothReceive() {
        ProtectionDomain pdB = allocPd(peer());
        SharedReceiveQueue srq = track(pdB.createSrq(new SrqAttr(16, 1, 0)));
        QpPair p1 = connect(spec(QpType.RC).pdB(pdB).srqB(srq));
        QpPair p2 = connect(spec(QpType.RC).pdB(pdB).srqB(srq));
        assertSame(srq, p1.b().qp().srq());
        MemoryRegion dst = register(pdB, PAGE_SIZE, MR_ALL);
        srq.postRecv(new RecvWorkRequest().wrId(100).sge(dst, 0, 256));
        srq.postRecv(new RecvWorkRequest().wrId(101).sge(dst, 256, 256));
        MemoryRegion s1 = register(p1.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion s2 = register(p2.a(), PAGE_SIZE, MR_ALL);
        fillPattern(s1.segment(), 0, 100, 1);
        fillPattern(s2.segment(), 0, 200, 2);
        p1.a().qp().postSend(wr(1, WrOpcode.SEND).sge(s1, 0, 100));
        expect(p1.a().sendCq(), 1, WcOpcode.SEND);
        p2.a().qp().postSend(wr(2, WrOpcode.SEND).sge(s2, 0, 200));
        expect(p2.a().sendCq(), 2, WcOpcode.SEND);
        WorkCompletion w1 = expect(p1.b().recvCq(), 100, WcOpcode.RECV);
        WorkCompletion w2 = expect(p2.b().recvCq(), 101, WcOpcode.RECV);
        assertEquals(p1.b().qpn(), w1.qpNum(), "the receive completes on the QP that got the message");
        assertEquals(p2.b().qpn(), w2.qpNum());
        assertEquals(100, w1.byteLen());
        assertEquals(200, w2.byteLen());
        assertPattern(dst.segment(), 0, 100, 1, "first message");
        assertPattern(dst.segment(), 256, 200, 2, "second message");
    }

    @Test
    void limitFiresOnceWhenFewerThanLimitRemainAndDisarms() throws Exception {
        ProtectionDomain pdB = allocPd(peer());
        SharedReceiveQueue srq = track(pdB.createSrq(new SrqAttr(16, 1, 0)));
        QpPair p = connect(spec(QpType.RC).pdB(pdB).srqB(srq).cqe(32));
        MemoryRegion dst = register(pdB, 16 * 64, MR_ALL);
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 10; i++) {
            srq.postRecv(new RecvWorkRequest().wrId(100 + i).sge(dst, i * 64L, 64));
        }
        srq.modify(new SrqAttr(0, 0, 7), SrqAttrMask.LIMIT);
        assertEquals(7, srq.query().srqLimit(), "armed limit reads back");
        for (int i = 0; i < 3; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 8));
            expect(p.a().sendCq(), i, WcOpcode.SEND);
        }
        assertNoAsyncEvent(peer(), AsyncEventType.SRQ_LIMIT_REACHED, QUIET_MS); // 7 left: not below 7
        p.a().qp().postSend(wr(3, WrOpcode.SEND).sge(src, 0, 8));
        expect(p.a().sendCq(), 3, WcOpcode.SEND);
        AsyncEvent e = awaitAsyncEvent(peer(), AsyncEventType.SRQ_LIMIT_REACHED);
        assertSame(srq, e.srq(), "the event names the SRQ");
        assertEquals(0, srq.query().srqLimit(), "the limit disarms when it fires");
        for (int i = 4; i < 6; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 8));
            expect(p.a().sendCq(), i, WcOpcode.SEND);
        }
        assertNoAsyncEvent(peer(), AsyncEventType.SRQ_LIMIT_REACHED, QUIET_MS);
        for (int i = 0; i < 6; i++) {
            expect(p.b().recvCq(), 100 + i, WcOpcode.RECV);
        }
    }

    @Test
    void limitAboveDeviceMaxFailsEinval() {
        int max = deviceAttr().maxSrqWr();
        assumeTrue(max < Integer.MAX_VALUE);
        SharedReceiveQueue srq = track(allocPd(ctx).createSrq(new SrqAttr(16, 1, 0)));
        assertErrno(Errno.EINVAL, () -> srq.modify(new SrqAttr(0, 0, max + 1), SrqAttrMask.LIMIT));
        assertEquals(0, srq.query().srqLimit());
    }

    @Test
    void resizeWorksUpToMaxAndKeepsPostedReceives() {
        int max = deviceAttr().maxSrqWr();
        ProtectionDomain pdB = allocPd(peer());
        SharedReceiveQueue srq = track(pdB.createSrq(new SrqAttr(8, 1, 0)));
        QpPair p = connect(spec(QpType.RC).pdB(pdB).srqB(srq));
        MemoryRegion dst = register(pdB, PAGE_SIZE, MR_ALL);
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 3; i++) {
            srq.postRecv(new RecvWorkRequest().wrId(100 + i).sge(dst, i * 64L, 64));
        }
        srq.modify(new SrqAttr(64, 0, 0), SrqAttrMask.MAX_WR);
        assertTrue(srq.query().maxWr() >= 64);
        srq.modify(new SrqAttr(max, 0, 0), SrqAttrMask.MAX_WR);
        assertTrue(srq.query().maxWr() >= max);
        if (max < Integer.MAX_VALUE) {
            assertErrno(Errno.EINVAL, () -> srq.modify(new SrqAttr(max + 1, 0, 0), SrqAttrMask.MAX_WR));
        }
        for (int i = 0; i < 3; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 8));
            expect(p.a().sendCq(), i, WcOpcode.SEND);
            expect(p.b().recvCq(), 100 + i, WcOpcode.RECV);
        }
    }

    @Test
    void moreReceivesThanMaxFailsEnomem() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        int c = srq.query().maxWr();
        for (int i = 0; i < c; i++) {
            srq.postRecv(new RecvWorkRequest().wrId(i).sge(mr, 0, 8));
        }
        RecvWorkRequest extra = new RecvWorkRequest().wrId(c).sge(mr, 0, 8);
        PostException e = assertPostErrno(Errno.ENOMEM, () -> srq.postRecv(extra));
        assertSame(extra, e.badWr());
    }

    @Test
    void moreSgesThanMaxFailsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        MemoryRegion mr = register(pd, 64 * PAGE_SIZE, MR_ALL);
        RecvWorkRequest r = new RecvWorkRequest().wrId(1);
        for (int i = 0; i <= srq.query().maxSge(); i++) {
            r.sge(mr, i * 64L, 64);
        }
        PostException e = assertPostErrno(Errno.EINVAL, () -> srq.postRecv(r));
        assertSame(r, e.badWr());
    }
}

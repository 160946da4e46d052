// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Control path, "Posting": what post_send and post_recv refuse, and how they say it. */
@Rule({"S-POST-1", "S-POST-2", "S-POST-3", "S-DATA-2"})
public class PostingConformanceTest extends AbstractVerbsTest {
    private ProtectionDomain pd;
    private MemoryRegion mr;

    private QueuePair lone(QpType type, QpState state) {
        if (pd == null) {
            pd = allocPd(ctx);
            mr = register(pd, 4 * PAGE_SIZE, MR_ALL);
        }
        QueuePair qp = createQp(pd, type);
        if (state != QpState.RESET) {
            bringUpSelfConnected(qp, state);
        }
        return qp;
    }

    private static RecvWorkRequest recv(long id, MemoryRegion m, int sges) {
        RecvWorkRequest r = new RecvWorkRequest().wrId(id);
        for (int i = 0; i < sges; i++) {
            r.sge(m, i * 64L, 64);
        }
        return r;
    }

    // ---------------------------------------------------------------- state

    @ParameterizedTest
    @EnumSource(QpType.class)
    void postRecvInResetFailsEinval(QpType type) {
        QueuePair qp = lone(type, QpState.RESET);
        RecvWorkRequest r = recv(1, mr, 1);
        PostException e = assertPostErrno(Errno.EINVAL, () -> qp.postRecv(r));
        assertSame(r, e.badWr());
        assertEquals(0, e.badIndex());
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void postRecvInInitIsAccepted(QpType type) {
        QueuePair qp = lone(type, QpState.INIT);
        qp.postRecv(recv(1, mr, 1));
    }

    static Stream<Arguments> statesBeforeRts() {
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            for (QpState s : new QpState[] {QpState.RESET, QpState.INIT, QpState.RTR}) {
                l.add(Arguments.of(t, s));
            }
        }
        return l.stream();
    }

    @ParameterizedTest(name = "{0} in {1}")
    @MethodSource("statesBeforeRts")
    void postSendBeforeRtsFailsEinval(QpType type, QpState state) {
        QueuePair qp = lone(type, state);
        SendWorkRequest w = wr(1, WrOpcode.SEND).sge(mr, 0, 16);
        if (type == QpType.UD) {
            AddressHandle ah = track(pd.createAh(AhAttr.roce(ctx.queryGid(1, gidIndex(ctx)), gidIndex(ctx))));
            w.ud(ah, qp.qpn(), DEFAULT_QKEY);
        }
        PostException e = assertPostErrno(Errno.EINVAL, () -> qp.postSend(w));
        assertSame(w, e.badWr());
        assertEquals(0, e.badIndex());
    }

    // ---------------------------------------------------------------- queue depth

    @Test
    void moreSendWorkRequestsThanMaxFailsEnomem() {
        // B posts no receive and A retries RNR for ever, so no SEND can complete and free its slot.
        QpPair p = connect(spec(QpType.RC).capA(new QpCap(8, 4, 1, 1, 0)).rnrRetry(7).minRnrTimerB(20));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        int c = p.a().qp().cap().maxSendWr;
        for (int i = 0; i < c; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 8));
        }
        SendWorkRequest extra = wr(c, WrOpcode.SEND).sge(src, 0, 8);
        PostException e = assertPostErrno(Errno.ENOMEM, () -> p.a().qp().postSend(extra));
        assertSame(extra, e.badWr());
        QpBringUp.to(p.a().qp(), QpState.ERR);
        for (int i = 0; i < c; i++) {
            expect(p.a().sendCq(), i, WcStatus.WR_FLUSH_ERR);
        }
        assertNoCompletion(p.a().sendCq(), "the refused WR was never queued");
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void moreRecvWorkRequestsThanMaxFailsEnomem(QpType type) {
        QueuePair qp = lone(type, QpState.INIT);
        int c = qp.cap().maxRecvWr;
        for (int i = 0; i < c; i++) {
            qp.postRecv(recv(i, mr, 1));
        }
        RecvWorkRequest extra = recv(c, mr, 1);
        PostException e = assertPostErrno(Errno.ENOMEM, () -> qp.postRecv(extra));
        assertSame(extra, e.badWr());
        assertEquals(0, e.badIndex());
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void recvChainLongerThanTheQueueReportsTheFirstWrNotPosted(QpType type) {
        QueuePair qp = lone(type, QpState.INIT);
        int c = qp.cap().maxRecvWr;
        RecvWorkRequest head = recv(0, mr, 1);
        RecvWorkRequest tail = head;
        for (int i = 1; i <= c; i++) {
            RecvWorkRequest r = recv(i, mr, 1);
            tail.next(r);
            tail = r;
        }
        PostException e = assertPostErrno(Errno.ENOMEM, () -> qp.postRecv(head));
        assertEquals(c, e.badIndex());
        assertSame(tail, e.badWr());
    }

    // ---------------------------------------------------------------- scatter/gather

    @ParameterizedTest
    @EnumSource(QpType.class)
    void moreSendSgesThanMaxFailsEinval(QpType type) {
        QpPair p = connect(spec(type));
        MemoryRegion src = register(p.a(), 64 * PAGE_SIZE, MR_ALL);
        int max = p.a().qp().cap().maxSendSge;
        SendWorkRequest w = p.toB(wr(1, WrOpcode.SEND));
        for (int i = 0; i <= max; i++) {
            w.sge(src, i * 8L, 8);
        }
        PostException e = assertPostErrno(Errno.EINVAL, () -> p.a().qp().postSend(w));
        assertSame(w, e.badWr());
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void moreRecvSgesThanMaxFailsEinval(QpType type) {
        QueuePair qp = lone(type, QpState.INIT);
        MemoryRegion big = register(pd, 64 * PAGE_SIZE, MR_ALL);
        RecvWorkRequest r = recv(1, big, qp.cap().maxRecvSge + 1);
        PostException e = assertPostErrno(Errno.EINVAL, () -> qp.postRecv(r));
        assertSame(r, e.badWr());
    }

    // ---------------------------------------------------------------- operation checks

    static Stream<Arguments> unalignedAtomics() {
        return Stream.of(
                Arguments.of(WrOpcode.ATOMIC_FETCH_AND_ADD, 1), Arguments.of(WrOpcode.ATOMIC_FETCH_AND_ADD, 4),
                Arguments.of(WrOpcode.ATOMIC_CMP_AND_SWP, 2), Arguments.of(WrOpcode.ATOMIC_CMP_AND_SWP, 7));
    }

    @ParameterizedTest(name = "{0} at +{1}")
    @MethodSource("unalignedAtomics")
    void atomicWithUnalignedRemoteAddressFailsEinval(WrOpcode op, int misalign) {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion remote = register(p.b(), PAGE_SIZE, MR_ALL);
        SendWorkRequest w = new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(local, 0, 8);
        long target = addr(remote, 64 + misalign);
        if (op == WrOpcode.ATOMIC_FETCH_AND_ADD) {
            w.fetchAdd(target, remote.rkey(), 1);
        } else {
            w.compareAndSwap(target, remote.rkey(), 0, 1);
        }
        PostException e = assertPostErrno(Errno.EINVAL, () -> p.a().qp().postSend(w));
        assertSame(w, e.badWr());
        assertGuardAround(remote, 0, 0, "remote memory");
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void inlineDataAboveMaxInlineDataFailsEinval(QpType type) {
        int want = Math.min(64, deviceAttr().maxInlineData());
        assumeTrue(want > 0, "device has no inline data");
        QpPair p = connect(spec(type).capA(new QpCap(16, 16, 2, 2, want)));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        int max = p.a().qp().cap().maxInlineData;
        SendWorkRequest w = p.toB(wr(1, WrOpcode.SEND).flags(SendFlag.SIGNALED | SendFlag.INLINE)
                .sge(src, 0, max + 1));
        PostException e = assertPostErrno(Errno.EINVAL, () -> p.a().qp().postSend(w));
        assertSame(w, e.badWr());
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void inlineDataUpToMaxInlineDataIsAccepted(QpType type) {
        int want = Math.min(64, deviceAttr().maxInlineData());
        assumeTrue(want > 0, "device has no inline data");
        QpPair p = connect(spec(type).capA(new QpCap(16, 16, 2, 2, want)));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        int max = p.a().qp().cap().maxInlineData;
        int len = Math.min(max, type == QpType.UD ? p.spec().mtu().bytes() : max);
        postRecv(p.b(), 9, dst, 0, len + 40);
        p.a().qp().postSend(p.toB(wr(1, WrOpcode.SEND).flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(src, 0, len)));
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
    }

    static Stream<Arguments> opcodesNotForType() {
        return Stream.of(
                Arguments.of(QpType.UD, WrOpcode.RDMA_WRITE), Arguments.of(QpType.UD, WrOpcode.RDMA_WRITE_WITH_IMM),
                Arguments.of(QpType.UD, WrOpcode.RDMA_READ), Arguments.of(QpType.UD, WrOpcode.ATOMIC_CMP_AND_SWP),
                Arguments.of(QpType.UD, WrOpcode.ATOMIC_FETCH_AND_ADD),
                Arguments.of(QpType.UC, WrOpcode.RDMA_READ), Arguments.of(QpType.UC, WrOpcode.ATOMIC_CMP_AND_SWP),
                Arguments.of(QpType.UC, WrOpcode.ATOMIC_FETCH_AND_ADD));
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("opcodesNotForType")
    void opcodeTheQpTypeDoesNotSupportFailsEinval(QpType type, WrOpcode op) {
        QpPair p = connect(spec(type));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion remote = register(p.b(), PAGE_SIZE, MR_ALL);
        SendWorkRequest w = p.toB(wr(1, op).sge(local, 0, 8).rdma(addr(remote, 0), remote.rkey()));
        PostException e = assertPostErrno(Errno.EINVAL, () -> p.a().qp().postSend(w));
        assertSame(w, e.badWr());
    }

    @Test
    void postRecvToQpWithSrqFailsEinval() {
        ProtectionDomain p = allocPd(ctx);
        MemoryRegion m = register(p, PAGE_SIZE, MR_ALL);
        SharedReceiveQueue srq = track(p.createSrq(new SrqAttr(16, 1, 0)));
        CompletionQueue cq = createCq(ctx, 8);
        QueuePair qp = createQp(p, new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        bringUpSelfConnected(qp, QpState.INIT);
        RecvWorkRequest r = recv(1, m, 1);
        PostException e = assertPostErrno(Errno.EINVAL, () -> qp.postRecv(r));
        assertSame(r, e.badWr());
    }

    // ---------------------------------------------------------------- bad_wr

    @Test
    void failingSendInAChainIsReportedAndTheOnesBeforeItArePosted() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), 64 * PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 3; i++) {
            postRecv(p.b(), 100 + i, dst, i * 64L, 64);
        }
        SendWorkRequest w1 = wr(1, WrOpcode.SEND).sge(src, 0, 8);
        SendWorkRequest w2 = wr(2, WrOpcode.SEND);
        for (int i = 0; i <= p.a().qp().cap().maxSendSge; i++) {
            w2.sge(src, i * 8L, 8);
        }
        SendWorkRequest w3 = wr(3, WrOpcode.SEND).sge(src, 0, 8);
        w1.next(w2);
        w2.next(w3);
        PostException e = assertPostErrno(Errno.EINVAL, () -> p.a().qp().postSend(w1));
        assertSame(w2, e.badWr(), "bad_wr is the second request");
        assertEquals(1, e.badIndex());
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
        expect(p.b().recvCq(), 100, WcOpcode.RECV);
        assertNoCompletion(p.a().sendCq(), "the WRs from bad_wr on were not posted");
        assertNoCompletion(p.b().recvCq(), "only the first WR reached the peer");
    }

    @Test
    void failingRecvInAChainIsReportedAndTheOnesBeforeItArePosted() {
        QpPair p = connect(spec(QpType.RC).capB(new QpCap(16, 16, 2, 2, 0)));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), 64 * PAGE_SIZE, MR_ALL);
        RecvWorkRequest r1 = recv(1, dst, 1);
        RecvWorkRequest r2 = recv(2, dst, p.b().qp().cap().maxRecvSge + 1);
        RecvWorkRequest r3 = recv(3, dst, 1);
        r1.next(r2);
        r2.next(r3);
        PostException e = assertPostErrno(Errno.EINVAL, () -> p.b().qp().postRecv(r1));
        assertSame(r2, e.badWr());
        assertEquals(1, e.badIndex());
        p.a().qp().postSend(wr(7, WrOpcode.SEND).sge(src, 0, 8));
        expect(p.a().sendCq(), 7, WcOpcode.SEND);
        expect(p.b().recvCq(), 1, WcOpcode.RECV);
        QpBringUp.to(p.b().qp(), QpState.ERR);
        assertNoCompletion(p.b().recvCq(), "nothing after the first receive was posted, so nothing is flushed");
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryRegion.ReregFlag;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
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
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Control path, "MR". */
@Rule({"S-MR-1", "S-MR-2", "S-MR-3", "S-MR-4"})
public class MemoryRegionConformanceTest extends AbstractVerbsTest {
    private static final int LW = Access.LOCAL_WRITE;
    private static final int RW = Access.REMOTE_WRITE;
    private static final int RR = Access.REMOTE_READ;
    private static final int RA = Access.REMOTE_ATOMIC;
    private static final int MW = Access.MW_BIND;

    @Test
    void registrationReportsWhatWasRegistered() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(3 * PAGE_SIZE);
        try (MemoryRegion mr = pd.regMr(s, MR_ALL)) {
            assertSame(pd, mr.pd());
            assertEquals(s.address(), mr.address());
            assertEquals(s.byteSize(), mr.length());
            assertEquals(MR_ALL, mr.access());
            assertEquals(s.address(), mr.segment().address());
            assertEquals(s.byteSize(), mr.segment().byteSize());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {RW, RA, RW | RR, RA | RR, RW | RA, RW | MW})
    void remoteWriteOrAtomicWithoutLocalWriteFailsEinval(int access) {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(PAGE_SIZE);
        assertErrno(Errno.EINVAL, () -> track(pd.regMr(s, access)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, LW, RR, LW | RW, LW | RA, LW | RW | RR | RA, LW | MW, RR | MW})
    void validAccessIsAccepted(int access) {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = track(pd.regMr(allocate(PAGE_SIZE), access));
        assertEquals(access, mr.access(), Access.toString(access));
    }

    @Test
    void sameBufferRegisteredSeveralTimesHasDistinctKeys() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(PAGE_SIZE);
        Set<Integer> lkeys = new HashSet<>();
        Set<Integer> rkeys = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            MemoryRegion mr = track(pd.regMr(s, MR_ALL));
            assertTrue(lkeys.add(mr.lkey()), "lkey 0x" + Integer.toHexString(mr.lkey()) + " given twice");
            assertTrue(rkeys.add(mr.rkey()), "rkey 0x" + Integer.toHexString(mr.rkey()) + " given twice");
        }
    }

    @Test
    void overlappingSlicesCanBeRegistered() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(4 * PAGE_SIZE);
        MemoryRegion whole = track(pd.regMr(s, LW));
        MemoryRegion middle = track(pd.regMr(s.asSlice(PAGE_SIZE + 17, 2 * PAGE_SIZE), LW | RR));
        assertEquals(s.address() + PAGE_SIZE + 17, middle.address());
        assertNotEquals(whole.lkey(), middle.lkey());
    }

    @Test
    void reregChangesAccess() {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, LW);
        assumeReregSupported(mr);
        mr.rereg(ReregFlag.CHANGE_ACCESS, null, MR_ALL);
        assertEquals(MR_ALL, mr.access());
        assertSame(pd, mr.pd());
        mr.rereg(ReregFlag.CHANGE_ACCESS, null, RR);
        assertEquals(RR, mr.access());
    }

    @Test
    void reregToRemoteWriteWithoutLocalWriteFailsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, LW);
        assumeReregSupported(mr);
        assertErrno(Errno.EINVAL, () -> mr.rereg(ReregFlag.CHANGE_ACCESS, null, RW));
        assertEquals(LW, mr.access(), "a refused rereg changes nothing");
    }

    @Test
    void reregChangesPd() {
        ProtectionDomain pd1 = allocPd(ctx);
        ProtectionDomain pd2 = allocPd(ctx);
        MemoryRegion mr = register(pd1, PAGE_SIZE, LW);
        assumeReregSupported(mr);
        mr.rereg(ReregFlag.CHANGE_PD, pd2, 0);
        assertSame(pd2, mr.pd());
        assertEquals(LW, mr.access(), "CHANGE_PD alone keeps the access");
        pd1.close();
        assertTrue(pd1.isClosed(), "the old PD is no longer used by the MR");
        assertErrno(Errno.EBUSY, pd2::close);
    }

    @Test
    void reregAccessGrantsRemoteWrite() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, LW);
        fillPattern(src.segment(), 0, 100, 1);
        assumeReregSupported(dst);
        dst.rereg(ReregFlag.CHANGE_ACCESS, null, LW | RW);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 100).rdma(addr(dst, 8), dst.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 8, 100, 1, "written through the re-registered rkey");
    }

    @Test
    void reregToThePdOfTheQpGrantsItAccess() {
        QpPair p = connect(spec(QpType.RC));
        ProtectionDomain other = allocPd(p.b().ctx());
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(other, PAGE_SIZE, LW | RW);
        fillPattern(src.segment(), 0, 64, 2);
        assumeReregSupported(dst);
        dst.rereg(ReregFlag.CHANGE_PD, p.b().pd(), 0);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 64).rdma(addr(dst, 0), dst.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 0, 64, 2, "written after moving the MR to the QP's PD");
    }

    @Test
    void deregWithBoundType2WindowIsRefusedEbusy() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion mr = register(p.a(), PAGE_SIZE, LW | RW | MW);
        MemoryWindow mw = track(p.a().pd().allocMw(MwType.TYPE_2));
        int rkey = mw.nextRkey();
        p.a().qp().postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED)
                .bindMw(mw, rkey, mr, mr.address(), PAGE_SIZE, RW));
        expect(p.a().sendCq(), 5, WcOpcode.BIND_MW);
        assertErrno(Errno.EBUSY, mr::close);
        assertFalse(mr.isClosed());
        mw.close();
        mr.close();
        assertTrue(mr.isClosed());
    }

    /**
     * A posted receive does not keep its MR: deregistration succeeds (as rxe_dereg_mr), and the receive,
     * when a SEND arrives for it, finds no region and fails as one with a bad lkey would, leaving the
     * memory untouched.
     */
    @Test
    void deregWhileAReceiveNamesItSucceedsAndTheReceiveFailsLikeABadLkey() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemorySegment memory = allocate(PAGE_SIZE);
        MemoryRegion dst = p.b().pd().regMr(memory, LW);
        p.b().qp().postRecv(new RecvWorkRequest().wrId(1).sge(dst, 0, 256));
        dst.close();
        assertTrue(dst.isClosed(), "a posted receive does not hold its region");
        fillPattern(src.segment(), 0, 64, 7);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 64));
        expect(p.a().sendCq(), 2, WcStatus.REM_OP_ERR);
        expect(p.b().recvCq(), 1, WcStatus.LOC_QP_OP_ERR);
        assertGuard(memory, 0, memory.byteSize(), "memory of the deregistered region");
    }

    /**
     * A send that has not run yet (posted in SQD) does not keep its MR: deregistration succeeds, and
     * when the QP returns to RTS the send finds no region and completes LOC_PROT_ERR; nothing reaches
     * the peer.
     */
    @Test
    void deregWhileASendNamesItSucceedsAndTheSendCompletesWithLocProtErr() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = p.a().pd().regMr(allocate(PAGE_SIZE), LW);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, LW);
        postRecv(p.b(), 1, dst, 0, 256);
        fillPattern(src.segment(), 0, 64, 8);
        p.a().qp().modify(new QpAttr().state(QpState.SQD), QpAttrMask.STATE);
        awaitQpState(p.a().qp(), QpState.SQD);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 64));
        src.close();
        assertTrue(src.isClosed(), "a posted send does not hold its region");
        QpBringUp.to(p.a().qp(), QpState.RTS);
        expect(p.a().sendCq(), 2, WcStatus.LOC_PROT_ERR);
        assertGuardAround(dst, 0, 0, "nothing reaches the peer");
    }

    /** rereg with a new translation, or a skip where the provider cannot move a registration (rxe). */
    private static void reregTranslation(MemoryRegion mr, MemorySegment to) {
        try {
            mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, to, 0);
        } catch (VerbsException e) {
            assumeTrue(e.errno() != Errno.EOPNOTSUPP, "the provider cannot change an MR's translation");
            throw e;
        }
    }

    @Test
    void reregWithANewTranslationMovesTheRegionAndRemoteWritesLandInTheNewMemory() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, LW | RW);
        MemorySegment old = dst.segment();
        MemorySegment fresh = allocate(2 * PAGE_SIZE);
        reregTranslation(dst, fresh);
        assertEquals(fresh.address(), dst.address(), "address() after rereg");
        assertEquals(fresh.byteSize(), dst.length(), "length() after rereg");
        assertEquals(fresh.address(), dst.segment().address(), "segment() after rereg");
        assertEquals(LW | RW, dst.access(), "access kept");
        fillPattern(src.segment(), 0, 200, 3);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 200).rdma(fresh.address() + PAGE_SIZE + 8,
                dst.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(fresh, PAGE_SIZE + 8, 200, 3, "written into the new memory");
        assertGuard(old, 0, old.byteSize(), "the old memory");
        p.a().qp().postSend(wr(2, WrOpcode.RDMA_WRITE).sge(src, 0, 8).rdma(old.address(), dst.rkey()));
        expect(p.a().sendCq(), 2, WcStatus.REM_ACCESS_ERR);
        assertGuard(old, 0, old.byteSize(), "the old memory is no longer reachable");
    }

    @Test
    void reregWithANewTranslationWhileAWindowIsBoundIsRefusedEbusy() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion mr = register(p.a(), PAGE_SIZE, LW | RW | MW);
        MemoryWindow mw = track(p.a().pd().allocMw(MwType.TYPE_2));
        p.a().qp().postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED)
                .bindMw(mw, mw.nextRkey(), mr, mr.address(), PAGE_SIZE, RW));
        expect(p.a().sendCq(), 5, WcOpcode.BIND_MW);
        long before = mr.address();
        VerbsException e = assertThrows(VerbsException.class,
                () -> mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, allocate(PAGE_SIZE), 0));
        assumeTrue(e.errno() != Errno.EOPNOTSUPP, "the provider cannot change an MR's translation");
        assertEquals(Errno.name(Errno.EBUSY), Errno.name(e.errno()), e::getMessage);
        assertEquals(before, mr.address(), "a refused rereg changes nothing");
    }

    /**
     * A work request that has not run yet does not pin an MR's translation: the rereg succeeds and the
     * request, when it runs, uses the region as it is then (here it gathers from the new memory).
     */
    @Test
    void reregWithANewTranslationWhileAWorkRequestIsPostedAppliesToTheRequest() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, LW | RW);
        MemorySegment fresh = allocate(PAGE_SIZE);
        fillPattern(fresh, 0, 64, 9);
        p.a().qp().modify(new QpAttr().state(QpState.SQD), QpAttrMask.STATE);
        awaitQpState(p.a().qp(), QpState.SQD);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(fresh.address(), 64, src.lkey())
                .rdma(addr(dst, 0), dst.rkey()));
        try {
            reregTranslation(src, fresh);
        } finally {
            QpBringUp.to(p.a().qp(), QpState.RTS);
        }
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 0, 64, 9, "gathered through the new translation");
    }

    // ---------------------------------------------------------------- posts racing a destroy

    /** Where the racing thread posts work requests naming the MR. */
    public enum PostTarget { SEND_QUEUE, RECEIVE_QUEUE, SHARED_RECEIVE_QUEUE }

    /** Rounds per race: the window is a few stores wide, so many rounds for both orders to happen. */
    private static final int POST_RACE_ROUNDS = 2_000;

    /**
     * One thread posts work requests naming MR m (WRITEs from m, or receives into m) on QP q (or SRQ
     * s) while another destroys q (or s); once the poster has stopped, m deregisters, every round:
     * nothing a destroyed queue held, posted before, during or after the destroy, keeps m busy.
     */
    @ParameterizedTest
    @EnumSource(PostTarget.class)
    void aPostRacingTheDestroyOfItsQueueNeverLeavesTheMrBusy(PostTarget target) throws Exception {
        if (target != PostTarget.SHARED_RECEIVE_QUEUE) {
            assumeModifyQpConnects(); // before anything is made: the rounds' QPs are closed by the rounds only
        }
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion dst = register(pd, PAGE_SIZE, MR_ALL);
        ExecutorService poster = Executors.newSingleThreadExecutor();
        int raced = 0;
        int busy = 0;
        String firstBusy = null;
        try {
            for (int round = 0; round < POST_RACE_ROUNDS; round++) {
                CompletionQueue cq = ctx.createCq(64);
                VerbsResource queue;
                QueuePair qp = null;
                SharedReceiveQueue srq = null;
                if (target == PostTarget.SHARED_RECEIVE_QUEUE) {
                    srq = pd.createSrq(new SrqAttr(16, 1, 0));
                    queue = srq;
                } else {
                    qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(16, 16, 1, 1, 0)));
                    bringUpSelfConnected(qp, QpState.RTS);
                    queue = qp;
                }
                MemoryRegion m = pd.regMr(allocate(PAGE_SIZE), MR_ALL);
                CyclicBarrier start = new CyclicBarrier(2);
                QueuePair q = qp;
                SharedReceiveQueue s = srq;
                AtomicBoolean destroyed = new AtomicBoolean();
                Future<Integer> posts = poster.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return postUntilRefused(target, q, s, m, dst, destroyed);
                });
                start.await(10, TimeUnit.SECONDS);
                for (int spin = round % 64; spin > 0; spin--) {
                    Thread.onSpinWait(); // a different interleaving each round
                }
                queue.close();
                destroyed.set(true);
                int posted = posts.get(10, TimeUnit.SECONDS);
                if (posted > 0) {
                    raced++;
                }
                try {
                    m.close();
                } catch (VerbsException e) {
                    busy++;
                    firstBusy = firstBusy != null ? firstBusy : "round " + round + " (" + posted
                            + " posts before the destroy won): " + e.getMessage();
                    track(m); // for the cleanup, which reports it too
                }
                cq.close();
            }
        } finally {
            poster.shutdownNow();
        }
        assertEquals(0, busy, busy + " of " + POST_RACE_ROUNDS + " rounds left the MR busy after its " + target
                + " was destroyed; the first: " + firstBusy);
        assertTrue(raced > 0, "no round posted anything before the destroy: the race never happened");
    }

    /**
     * One thread posts a BIND_MW of a fresh type-2 window w to MR m while another deallocates w; once
     * the bind has completed (bound, then unbound by the dealloc, or failed MW_BIND_ERR) and its QP is
     * gone, m deregisters, every round: a bind never binds a window deallocated before it ran.
     */
    @Test
    void aBindRacingTheDeallocOfItsWindowNeverLeavesTheMrBusy() throws Exception {
        assumeModifyQpConnects(); // before anything is made: a skipped round leaves nothing open
        ProtectionDomain pd = allocPd(ctx);
        ExecutorService poster = Executors.newSingleThreadExecutor();
        int busy = 0;
        int bound = 0;
        String firstBusy = null;
        try {
            for (int round = 0; round < POST_RACE_ROUNDS / 4; round++) {
                CompletionQueue cq = ctx.createCq(4);
                QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(4, 1, 1, 1, 0)));
                bringUpSelfConnected(qp, QpState.RTS);
                MemoryRegion m = pd.regMr(allocate(PAGE_SIZE), MR_ALL | MW);
                MemoryWindow w = pd.allocMw(MwType.TYPE_2);
                SendWorkRequest bind = new SendWorkRequest().wrId(round).flags(SendFlag.SIGNALED)
                        .bindMw(w, w.nextRkey(), m, m.address(), PAGE_SIZE, RW);
                CyclicBarrier start = new CyclicBarrier(2);
                Future<Boolean> posted = poster.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    try {
                        qp.postSend(bind);
                        return true;
                    } catch (RuntimeException e) {
                        return false; // the window was already deallocated
                    }
                });
                start.await(10, TimeUnit.SECONDS);
                for (int spin = round % 64; spin > 0; spin--) {
                    Thread.onSpinWait();
                }
                w.close();
                if (posted.get(10, TimeUnit.SECONDS)) {
                    WorkCompletion wc = pollOne(cq);
                    assertTrue(wc.status() == WcStatus.SUCCESS || wc.status() == WcStatus.MW_BIND_ERR, wc::toString);
                    bound += wc.status() == WcStatus.SUCCESS ? 1 : 0;
                }
                qp.close();
                try {
                    m.close();
                } catch (VerbsException e) {
                    busy++;
                    firstBusy = firstBusy != null ? firstBusy : "round " + round + ": " + e.getMessage();
                    track(m);
                }
                cq.close();
            }
        } finally {
            poster.shutdownNow();
        }
        assertEquals(0, busy, busy + " of " + POST_RACE_ROUNDS / 4 + " rounds left the MR busy after the window"
                + " was deallocated (" + bound + " binds succeeded); the first: " + firstBusy);
    }

    /**
     * Posts on the queue until it refuses (destroyed); returns how many posts it took. A post that
     * starts after the destroy has returned must be refused.
     */
    private static int postUntilRefused(PostTarget target, QueuePair qp, SharedReceiveQueue srq, MemoryRegion m,
                                        MemoryRegion dst, AtomicBoolean destroyed) {
        SendWorkRequest write = new SendWorkRequest().opcode(WrOpcode.RDMA_WRITE).sge(m, 0, 64)
                .rdma(dst.address(), dst.rkey());
        RecvWorkRequest recv = new RecvWorkRequest().sge(m, 64, 64);
        int posted = 0;
        while (!Thread.currentThread().isInterrupted()) {
            boolean after = destroyed.get();
            try {
                switch (target) {
                    case SEND_QUEUE -> qp.postSend(write);
                    case RECEIVE_QUEUE -> qp.postRecv(recv);
                    case SHARED_RECEIVE_QUEUE -> srq.postRecv(recv);
                }
                posted++;
                assertFalse(after, () -> target + ": a post after the destroy returned was accepted");
            } catch (PostException e) {
                if (e.errno() != Errno.ENOMEM) {
                    return posted; // a QP destroyed under the post: RESET refuses it (EINVAL)
                }
                // full: the queue is not destroyed yet, keep going
            } catch (IllegalStateException e) {
                return posted; // destroyed
            }
        }
        return posted; // the test gave up waiting
    }
}

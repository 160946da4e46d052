// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryRegion.ReregFlag;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.SrqAttrMask;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * Honest lifetimes (VerbsResource, SEMANTICS.md "PD ... Dealloc while used: EBUSY"): close is
 * idempotent, parents with children refuse to close, closed objects refuse to be used.
 */
@Rule({"S-LIFE-2", "S-LIFE-4"})
public class LifetimeConformanceTest extends AbstractVerbsTest {

    /** Every kind of verbs object. */
    public enum Kind { CONTEXT, PD, MR, MW_TYPE_1, MW_TYPE_2, CQ, CHANNEL, QP, SRQ, AH }

    private VerbsResource make(Kind k) {
        return switch (k) {
            case CONTEXT -> openContext();
            case PD -> ctx.allocPd();
            case MR -> allocPd(ctx).regMr(allocate(PAGE_SIZE), Access.LOCAL_WRITE);
            case MW_TYPE_1 -> allocPd(ctx).allocMw(MwType.TYPE_1);
            case MW_TYPE_2 -> allocPd(ctx).allocMw(MwType.TYPE_2);
            case CQ -> ctx.createCq(4);
            case CHANNEL -> ctx.createCompletionChannel();
            case QP -> {
                CompletionQueue cq = createCq(ctx, 4);
                yield allocPd(ctx).createQp(new QpInitAttr(QpType.RC, cq, cq));
            }
            case SRQ -> allocPd(ctx).createSrq(new SrqAttr(8, 1, 0));
            case AH -> allocPd(ctx).createAh(AhAttr.roce(ctx.queryGid(1, gidIndex(ctx)), gidIndex(ctx)));
        };
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void closeIsIdempotent(Kind kind) {
        VerbsResource r = make(kind);
        assertFalse(r.isClosed());
        r.close();
        assertTrue(r.isClosed());
        r.close();
        assertTrue(r.isClosed());
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void closedObjectRefusesUseWithIllegalStateException(Kind kind) {
        VerbsResource r = make(kind);
        r.close();
        assertThrows(IllegalStateException.class, () -> use(r), kind + " used after close");
    }

    private void use(VerbsResource r) throws InterruptedException {
        switch (r) {
            case Context c -> c.allocPd();
            case ProtectionDomain pd -> pd.regMr(allocate(PAGE_SIZE), Access.LOCAL_WRITE);
            case MemoryRegion mr -> mr.rereg(ReregFlag.CHANGE_ACCESS, null, Access.LOCAL_WRITE);
            case MemoryWindow mw -> {
                QueuePair qp = loneRts(mw.pd(), QpType.RC);
                MemoryRegion mr = register(mw.pd(), PAGE_SIZE, MR_ALL | Access.MW_BIND);
                mw.bind(qp, 1, SendFlag.SIGNALED, mr, mr.address(), PAGE_SIZE, Access.REMOTE_READ);
            }
            case CompletionQueue cq -> cq.poll(WorkCompletion.array(1));
            case CompletionChannel ch -> ch.context().createCq(1, ch, 0); // getEvent: EBADF, below
            case QueuePair qp -> qp.modify(new QpAttr().state(QpState.ERR), QpAttrMask.STATE);
            case SharedReceiveQueue srq -> srq.modify(new SrqAttr(0, 0, 1), SrqAttrMask.LIMIT);
            case AddressHandle ah -> {
                QueuePair qp = loneRts(ah.pd(), QpType.UD);
                MemoryRegion mr = register(ah.pd(), PAGE_SIZE, MR_ALL);
                qp.postSend(wr(1, WrOpcode.SEND).sge(mr, 0, 8).ud(ah, qp.qpn(), DEFAULT_QKEY));
            }
            default -> throw new AssertionError(r);
        }
    }

    private QueuePair loneRts(ProtectionDomain pd, QpType type) {
        QueuePair qp = createQp(pd, type);
        bringUpSelfConnected(qp, QpState.RTS);
        return qp;
    }

    @Test
    void blockingCallsOnAClosedObjectFailWithEbadf() {
        CompletionChannel ch = ctx.createCompletionChannel();
        ch.close();
        assertErrno(Errno.EBADF, () -> ch.getEvent(0));
        assertErrno(Errno.EBADF, () -> ch.getEvent(-1));
        Context other = openContext();
        EventPoller poller = other.createEventPoller();
        other.close();
        assertErrno(Errno.EBADF, () -> other.getAsyncEvent(0));
        assertErrno(Errno.EBADF, () -> other.getAsyncEvent(-1));
        assertFalse(other.hasAsyncEvent());
        poller.close();
        assertErrno(Errno.EBADF, () -> poller.poll(0));
        assertErrno(Errno.EBADF, () -> poller.poll(-1));
        assertThrows(IllegalStateException.class, () -> poller.add(ctx), "registering with a closed poller");
    }

    @Test
    void closedQpRefusesPosting() {
        CompletionQueue cq = createCq(ctx, 4);
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq));
        qp.close();
        assertThrows(IllegalStateException.class, () -> qp.postRecv(new RecvWorkRequest().sge(mr, 0, 8)));
        assertThrows(IllegalStateException.class,
                () -> qp.postSend(new SendWorkRequest().opcode(WrOpcode.SEND).sge(mr, 0, 8)));
        assertThrows(IllegalStateException.class, qp::query);
    }

    @Test
    void closedSrqRefusesPosting() {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        SharedReceiveQueue srq = pd.createSrq(new SrqAttr(8, 1, 0));
        srq.close();
        assertThrows(IllegalStateException.class, () -> srq.postRecv(new RecvWorkRequest().sge(mr, 0, 8)));
        assertThrows(IllegalStateException.class, srq::query);
    }

    @Test
    void cqUsedByQpCannotBeDestroyedEbusy() {
        CompletionQueue scq = createCq(ctx, 4);
        CompletionQueue rcq = createCq(ctx, 4);
        QueuePair qp = createQp(allocPd(ctx), new QpInitAttr(QpType.RC, scq, rcq));
        assertErrno(Errno.EBUSY, scq::close);
        assertErrno(Errno.EBUSY, rcq::close);
        qp.close();
        scq.close();
        rcq.close();
        assertTrue(scq.isClosed() && rcq.isClosed());
    }

    @Test
    void srqUsedByQpCannotBeDestroyedEbusy() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        CompletionQueue cq = createCq(ctx, 4);
        QueuePair qp = createQp(pd, new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        assertErrno(Errno.EBUSY, srq::close);
        qp.close();
        srq.close();
        assertTrue(srq.isClosed());
    }

    @Test
    void mrCanBeDeregisteredOnceItsWindowIsDeallocated() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion mr = register(p.a(), PAGE_SIZE, MR_ALL | Access.MW_BIND);
        MemoryWindow mw = track(p.a().pd().allocMw(MwType.TYPE_1));
        mw.bind(p.a().qp(), 1, SendFlag.SIGNALED, mr, mr.address(), PAGE_SIZE,
                Access.REMOTE_WRITE);
        pollOne(p.a().sendCq());
        mw.close();
        mr.close();
        assertTrue(mr.isClosed(), "after the window is deallocated the MR can go");
    }

    @Test
    void reregToAnotherPdMovesTheDependency() {
        ProtectionDomain pd1 = allocPd(ctx);
        ProtectionDomain pd2 = allocPd(ctx);
        MemoryRegion mr = register(pd1, PAGE_SIZE, Access.LOCAL_WRITE);
        assertErrno(Errno.EBUSY, pd1::close);
        assumeReregSupported(mr);
        mr.rereg(ReregFlag.CHANGE_PD, pd2, 0);
        pd1.close();
        assertErrno(Errno.EBUSY, pd2::close);
        mr.close();
        pd2.close();
        assertTrue(pd2.isClosed());
    }

    @Test
    void resourcesOfOneContextOutliveAnotherContext() {
        Context other = openContext();
        ProtectionDomain pd = other.allocPd();
        pd.close();
        other.close();
        assertTrue(other.isClosed());
        ProtectionDomain mine = allocPd(ctx);
        register(mine, PAGE_SIZE, Access.LOCAL_WRITE);
    }

    // ---------------------------------------------------------------- creates racing a parent's close

    /** A create racing the close of one of its parents. */
    public enum Race { QP_VS_SEND_CQ_CLOSE, QP_VS_PD_CLOSE, MR_VS_PD_CLOSE, MW_VS_PD_CLOSE, SRQ_VS_PD_CLOSE,
        CQ_VS_CHANNEL_CLOSE, PD_VS_CONTEXT_CLOSE }

    /** Rounds per race: enough for both orders to happen on a busy two-core machine, bounded. */
    private static final int ROUNDS = 300;

    /**
     * What the device holds for objects that a test cannot see (keys in the key table, QP numbers), or
     * -1 if the provider cannot tell; a race that leaves one behind changes it.
     */
    private long hiddenDeviceObjects(Context c) {
        return setup.has(Capability.HIDDEN_OBJECT_COUNT) ? setup.hiddenObjects(c) : -1;
    }

    @ParameterizedTest
    @EnumSource(Race.class)
    void createRacingTheCloseOfItsParentEitherWinsOrLeavesNothing(Race race) throws Exception {
        ExecutorService creator = Executors.newSingleThreadExecutor();
        long before = hiddenDeviceObjects(ctx);
        int created = 0;
        int refused = 0;
        try {
            for (int round = 0; round < ROUNDS; round++) {
                Context c = race == Race.PD_VS_CONTEXT_CLOSE ? openContext() : ctx;
                ProtectionDomain pd = race == Race.PD_VS_CONTEXT_CLOSE ? null : c.allocPd();
                CompletionChannel channel = race == Race.CQ_VS_CHANNEL_CLOSE ? c.createCompletionChannel() : null;
                CompletionQueue cq = race == Race.QP_VS_SEND_CQ_CLOSE || race == Race.QP_VS_PD_CLOSE
                        ? c.createCq(4) : null;
                MemorySegment memory = race == Race.MR_VS_PD_CLOSE ? allocate(PAGE_SIZE) : null;
                VerbsResource parent = switch (race) {
                    case QP_VS_SEND_CQ_CLOSE -> cq;
                    case CQ_VS_CHANNEL_CLOSE -> channel;
                    case PD_VS_CONTEXT_CLOSE -> c;
                    default -> pd;
                };
                CyclicBarrier start = new CyclicBarrier(2);
                Future<Object> child = creator.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    try {
                        return switch (race) {
                            case QP_VS_SEND_CQ_CLOSE, QP_VS_PD_CLOSE -> pd.createQp(new QpInitAttr(QpType.RC, cq, cq));
                            case MR_VS_PD_CLOSE -> pd.regMr(memory, MR_ALL);
                            case MW_VS_PD_CLOSE -> pd.allocMw(MwType.TYPE_2);
                            case SRQ_VS_PD_CLOSE -> pd.createSrq(new SrqAttr(4, 1, 0));
                            case CQ_VS_CHANNEL_CLOSE -> c.createCq(4, channel, 0);
                            case PD_VS_CONTEXT_CLOSE -> c.allocPd();
                        };
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
                start.await(10, TimeUnit.SECONDS);
                VerbsException closeRefused = null;
                try {
                    parent.close();
                } catch (VerbsException e) {
                    closeRefused = e;
                }
                Object outcome = child.get(10, TimeUnit.SECONDS);
                if (outcome instanceof VerbsResource r) {
                    created++;
                    assertNotNull(closeRefused, () -> race + ": " + r + " was created and its parent closed under it");
                    assertEquals(Errno.name(Errno.EBUSY), Errno.name(closeRefused.errno()), closeRefused::getMessage);
                    assertFalse(parent.isClosed());
                    r.close();
                    parent.close();
                } else {
                    refused++;
                    RuntimeException e = (RuntimeException) outcome;
                    assertTrue(e instanceof IllegalStateException || e instanceof VerbsException, e::toString);
                    VerbsException cr = closeRefused;
                    assertTrue(cr == null, () -> race + ": the create failed (" + e + ") but the parent refused to"
                            + " close (" + cr.getMessage() + "): a user was left behind");
                    assertTrue(parent.isClosed());
                }
                // Every other parent closes now: nothing still holds it.
                for (VerbsResource rest : new VerbsResource[] {cq, channel, pd}) {
                    if (rest != null) {
                        rest.close();
                    }
                }
                if (c != ctx) {
                    c.close();
                }
            }
        } finally {
            creator.shutdownNow();
        }
        assertEquals(ROUNDS, created + refused);
        if (before >= 0) {
            assertEquals(before, hiddenDeviceObjects(ctx), "keys or QP numbers left on the device (" + created
                    + " creates won, " + refused + " lost)");
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.*;

/**
 * Checks soft makes at post and modify time where only part of rxe makes them, so a C program would not
 * see the same everywhere: the kernel's ib_post_send / ib_post_recv path refuses these work requests
 * (libibverbs' rxe provider passes them on), and uverbs refuses a controlled Q_Key to an unprivileged
 * process. Soft behaves as the kernel path and treats every caller as unprivileged.
 */
class PostAndModifyChecksTest {
    private static final AtomicInteger RUNS = new AtomicInteger();
    private Device device;
    private Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private MemoryRegion mr;
    private Arena arena;

    @BeforeEach
    void setUp() {
        device = SoftDevices.createLoopback("post-modify-checks-" + RUNS.incrementAndGet(), new LoopbackFabric(),
                null);
        ctx = device.open();
        pd = ctx.allocPd();
        cq = ctx.createCq(16);
        arena = Arena.ofShared();
        mr = pd.regMr(arena.allocate(4096, 8), Access.LOCAL_WRITE | Access.MW_BIND);
    }

    @AfterEach
    void tearDown() {
        try {
            mr.close();
            pd.close();
            cq.close();
            ctx.close();
        } finally {
            SoftDevices.remove(device);
            arena.close();
        }
    }

    private QueuePair rcQp() {
        QueuePair q = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(8, 8, 2, 2, 64)));
        ReceivePathFuzzTest.Connect.bringUp(q, QpType.RC, Gid.parse("::ffff:10.9.9.7"), 0x99);
        return q;
    }

    enum NoInline {
        READ(w -> w.opcode(WrOpcode.RDMA_READ).rdma(0x1000, 0x1234)),
        CMP_SWAP(w -> w.compareAndSwap(0x1000, 0x1234, 1, 2)),
        FETCH_ADD(w -> w.fetchAdd(0x1000, 0x1234, 1)),
        LOCAL_INV(w -> w.localInvalidate(0x1234)),
        BIND_MW(null);

        final Consumer<SendWorkRequest> shape;

        NoInline(Consumer<SendWorkRequest> shape) {
            this.shape = shape;
        }
    }

    /** rxe validate_send_wr: "opcode doesn't support inline data". */
    @ParameterizedTest
    @EnumSource(NoInline.class)
    void inlineFlagOnAnOpcodeWithoutPayloadFailsEinvalAtPost(NoInline kind) {
        QueuePair qp = rcQp();
        MemoryWindow mw = kind == NoInline.BIND_MW ? pd.allocMw(MwType.TYPE_2) : null;
        SendWorkRequest w = new SendWorkRequest().wrId(7).flags(SendFlag.SIGNALED | SendFlag.INLINE);
        if (mw != null) {
            w.bindMw(mw, mw.nextRkey(), mr, mr.address(), 64, Access.REMOTE_READ);
        } else {
            kind.shape.accept(w);
            if (kind != NoInline.LOCAL_INV) {
                w.sge(mr, 0, 8);
            }
        }
        PostException e = assertThrows(PostException.class, () -> qp.postSend(w));
        assertEquals(Errno.EINVAL, e.errno(), e.getMessage());
        assertSame(w, e.badWr());
        assertEquals(0, cq.poll(WorkCompletion.array(1)), "nothing was posted");
        assertEquals(QpState.RTS, qp.state());
        qp.close();
        if (mw != null) {
            mw.close();
        }
    }

    /** rxe post_one_recv: a receive of 2^31 bytes or more (IBA's largest message) is refused. */
    @Test
    void receiveOf2To31BytesOrMoreFailsEinvalOnTheQpAndTheSrq() {
        QueuePair qp = rcQp();
        RecvWorkRequest tooLong = new RecvWorkRequest().wrId(1).sge(mr.address(), 0x40000000, mr.lkey())
                .sge(mr.address(), 0x40000000, mr.lkey());
        PostException e = assertThrows(PostException.class, () -> qp.postRecv(tooLong));
        assertEquals(Errno.EINVAL, e.errno(), e.getMessage());
        assertSame(tooLong, e.badWr());
        qp.postRecv(new RecvWorkRequest().wrId(2).sge(mr.address(), 0x40000000, mr.lkey())
                .sge(mr.address(), 0x3FFFFFFF, mr.lkey())); // 2^31 - 1: accepted

        SharedReceiveQueue srq = pd.createSrq(new SrqAttr(4, 2, 0));
        RecvWorkRequest ok = new RecvWorkRequest().wrId(3).sge(mr, 0, 64);
        RecvWorkRequest bad = new RecvWorkRequest().wrId(4).sge(mr.address(), 0x80000000, mr.lkey());
        ok.next(bad);
        PostException s = assertThrows(PostException.class, () -> srq.postRecv(ok));
        assertEquals(Errno.EINVAL, s.errno(), s.getMessage());
        assertSame(bad, s.badWr(), "the chain stops at the long receive");
        qp.close();
        srq.close();
    }

    /** uverbs modify_qp: bit 31 of a Q_Key (a controlled Q_Key) needs privilege, which soft never has. */
    @Test
    void controlledQkeyFailsEpermForAnUnprivilegedProcess() {
        QueuePair ud = pd.createQp(new QpInitAttr(QpType.UD, cq, cq).cap(new QpCap(4, 4, 1, 1, 0)));
        int init = QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY;
        VerbsException e = assertThrows(VerbsException.class, () -> ud.modify(
                new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x80010000), init));
        assertEquals(Errno.EPERM, e.errno(), e.getMessage());
        assertEquals(QpState.RESET, ud.state(), "nothing changed");
        ud.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x7FFFFFFF), init);
        VerbsException later = assertThrows(VerbsException.class,
                () -> ud.modify(new QpAttr().qkey(0x80000000), QpAttrMask.QKEY));
        assertEquals(Errno.EPERM, later.errno());
        assertEquals(0x7FFFFFFF, ud.query().qkey, "the Q_Key is kept");
        ud.close();
    }
}

package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;

/**
 * Deregistration refuses (EBUSY) an MR that a posted, not yet completed work request names, now
 * counted per key instead of found by walking every QP: the count follows posting, completion,
 * reset and destruction, and an SRQ's receives do not hold a region (as before).
 */
class MrInUseTest {
    private Device dev;
    private Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private Arena arena;
    private final java.util.ArrayDeque<org.rdma4j.verbs.VerbsResource> opened = new java.util.ArrayDeque<>();

    @BeforeEach
    void open() {
        dev = SoftDevices.createLoopback("mr-in-use");
        ctx = dev.open();
        pd = ctx.allocPd();
        cq = ctx.createCq(16);
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        while (!opened.isEmpty()) {
            opened.pop().close();
        }
        cq.close();
        pd.close();
        arena.close();
        ctx.close();
        SoftDevices.remove(dev);
    }

    private MemoryRegion mr() {
        MemoryRegion mr = pd.regMr(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
        opened.push(mr);
        return mr;
    }

    private QueuePair initQp() {
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(4, 4, 2, 2, 0)));
        qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(0),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        opened.push(qp);
        return qp;
    }

    private static void assertBusy(MemoryRegion mr) {
        VerbsException e = assertThrows(VerbsException.class, mr::close);
        assertEquals(Errno.EBUSY, e.errno(), e::getMessage);
        assertFalse(mr.isClosed());
    }

    @Test
    void aPostedReceiveHoldsItsRegionUntilTheQpIsReset() {
        QueuePair qp = initQp();
        MemoryRegion a = mr();
        MemoryRegion b = mr();
        MemoryRegion unused = mr();
        qp.postRecv(new RecvWorkRequest().wrId(1).sge(a, 0, 64).sge(b, 0, 64));
        assertBusy(a);
        assertBusy(b);
        unused.close();
        assertTrue(unused.isClosed(), "a region no work request names deregisters");
        qp.modify(new QpAttr().state(QpState.RESET), QpAttrMask.STATE);
        a.close();
        b.close();
        assertTrue(a.isClosed() && b.isClosed(), "reset dropped the receive");
    }

    @Test
    void aDestroyedQpNoLongerHoldsTheRegionsItsReceivesNamed() {
        QueuePair qp = initQp();
        MemoryRegion a = mr();
        qp.postRecv(new RecvWorkRequest().wrId(1).sge(a, 0, 64));
        qp.postRecv(new RecvWorkRequest().wrId(2).sge(a, 64, 64));
        assertBusy(a);
        qp.close();
        a.close();
        assertTrue(a.isClosed());
    }

    @Test
    void aReceiveTakenByAFlushReleasesTheRegion() {
        QueuePair qp = initQp();
        MemoryRegion a = mr();
        qp.postRecv(new RecvWorkRequest().wrId(7).sge(a, 0, 64));
        assertBusy(a);
        qp.modify(new QpAttr().state(QpState.ERR), QpAttrMask.STATE);
        a.close();
        assertTrue(a.isClosed(), "the flushed receive no longer names it");
        qp.close();
    }

    @Test
    void receivesPostedToAnSrqDoNotHoldARegion() {
        SharedReceiveQueue srq = pd.createSrq(new SrqAttr(4, 1, 0));
        opened.push(srq);
        MemoryRegion a = mr();
        srq.postRecv(new RecvWorkRequest().wrId(1).sge(a, 0, 64));
        a.close();
        assertTrue(a.isClosed());
        srq.close();
    }
}

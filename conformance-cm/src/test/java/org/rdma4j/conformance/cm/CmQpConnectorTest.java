// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.conformance.ConformanceSetup;
import org.rdma4j.conformance.QpConnector;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * The connector itself: a pair it connects carries the suite's attributes (not the CM's defaults) with
 * the CM's AV and remote QPN, data crosses, and a passive address no device has fails with the step
 * named instead of hanging.
 */
class CmQpConnectorTest {
    static ConformanceSetup setup;
    static Context ca;
    static Context cb;

    @BeforeAll
    static void open() {
        setup = new SoftCmSetups().setups().getFirst();
        ca = setup.open();
        cb = setup.openPeer();
    }

    @AfterAll
    static void close() {
        cb.close();
        ca.close();
    }

    @Test
    void theConnectedPairCarriesTheSuitesAttributesAndData() throws Exception {
        try (Arena arena = Arena.ofShared(); ProtectionDomain pa = ca.allocPd(); ProtectionDomain pb = cb.allocPd();
             CompletionQueue qa = ca.createCq(16); CompletionQueue qb = cb.createCq(16);
             QueuePair a = pa.createQp(new QpInitAttr(QpType.RC, qa, qa));
             QueuePair b = pb.createQp(new QpInitAttr(QpType.RC, qb, qb));
             MemoryRegion ma = pa.regMr(arena.allocate(4096), Access.LOCAL_WRITE);
             MemoryRegion mb = pb.regMr(arena.allocate(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE)) {
            QpConnector.Link link = new QpConnector.Link(Mtu.MTU_512, 9, 5, 3, 2, 3);
            try (QpConnector.Connection c = setup.qpConnector().connect(
                    new QpConnector.Side(a, Access.REMOTE_READ, 0x123456, 7),
                    new QpConnector.Side(b, Access.REMOTE_WRITE, 0x654321, 11), link)) {
                QpAttr qa2 = a.query();
                QpAttr qb2 = b.query();
                assertEquals(QpState.RTS, qa2.qpState);
                assertEquals(QpState.RTS, qb2.qpState);
                assertEquals(b.qpn(), qa2.destQpNum, "the CM's REP named B's QP");
                assertEquals(a.qpn(), qb2.destQpNum, "the CM's REQ named A's QP");
                assertEquals(Mtu.MTU_512, qa2.pathMtu);
                assertEquals(Mtu.MTU_512, qb2.pathMtu);
                assertEquals(0x123456, qa2.sqPsn);
                assertEquals(0x123456, qb2.rqPsn);
                assertEquals(0x654321, qb2.sqPsn);
                assertEquals(0x654321, qa2.rqPsn);
                assertEquals(Access.REMOTE_READ, qa2.qpAccessFlags);
                assertEquals(Access.REMOTE_WRITE, qb2.qpAccessFlags);
                assertEquals(9, qa2.timeout);
                assertEquals(5, qa2.retryCnt);
                assertEquals(3, qa2.rnrRetry);
                assertEquals(2, qa2.maxRdAtomic);
                assertEquals(3, qb2.maxDestRdAtomic);
                assertEquals(11, qb2.minRnrTimer);

                b.postRecv(new RecvWorkRequest().wrId(2).sge(mb, 0, 64));
                ma.segment().setString(0, "through the CM", StandardCharsets.US_ASCII);
                a.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED).sge(ma, 0, 15));
                assertEquals(WcStatus.SUCCESS, poll(qa).status());
                WorkCompletion r = poll(qb);
                assertEquals(WcStatus.SUCCESS, r.status(), r::toString);
                assertEquals("through the CM", mb.segment().getString(0, StandardCharsets.US_ASCII));
            }
        }
    }

    @Test
    void aPassiveAddressNoDeviceHasFailsWithTheStepNamed() throws Exception {
        try (ProtectionDomain pa = ca.allocPd(); ProtectionDomain pb = cb.allocPd();
             CompletionQueue qa = ca.createCq(16); CompletionQueue qb = cb.createCq(16);
             QueuePair a = pa.createQp(new QpInitAttr(QpType.RC, qa, qa));
             QueuePair b = pb.createQp(new QpInitAttr(QpType.RC, qb, qb))) {
            QpConnector nowhere = new CmQpConnector(InetAddress.getByName("fe80::dead:beef"), null);
            RuntimeException e = assertThrows(RuntimeException.class, () -> nowhere.connect(
                    new QpConnector.Side(a, 0, 1, 12), new QpConnector.Side(b, 0, 2, 12),
                    new QpConnector.Link(Mtu.MTU_1024, 14, 7, 7, 1, 1)));
            assertNotNull(e.getMessage());
            assertTrue(e.getMessage().contains("fe80::dead:beef") || e.getMessage().contains("EADDRNOTAVAIL"),
                    e::getMessage);
            assertEquals(QpState.RESET, a.state(), "nothing moved A");
        }
    }

    private static WorkCompletion poll(CompletionQueue cq) throws InterruptedException {
        WorkCompletion[] wc = WorkCompletion.array(1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cq.poll(wc) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no completion in 10 s");
            }
            Thread.onSpinWait();
        }
        return wc[0];
    }
}

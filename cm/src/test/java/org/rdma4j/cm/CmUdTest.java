// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.cm.wire.SidrRep;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
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

/** UD ids (RDMA_PS_UDP): service id resolution with SIDR_REQ/SIDR_REP, then datagrams to the resolved QP. */
class CmUdTest extends CmTestSupport {
    @BeforeAll
    static void devices() {
        setUpDevices("cmu");
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    /** A UD QP on the id's device with its PD, CQ and MR. */
    private static final class UdEp implements AutoCloseable {
        final CmId id;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final QueuePair qp;

        UdEp(CmId id) {
            this.id = id;
            pd = id.context().allocPd();
            cq = id.context().createCq(16);
            mr = pd.regMr(Arena.ofShared().allocate(4096), Access.LOCAL_WRITE);
            qp = id.createQp(pd, new QpInitAttr(QpType.UD, cq, cq));
        }

        WorkCompletion poll() {
            WorkCompletion[] slot = WorkCompletion.array(1);
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(WAIT_S);
            while (cq.poll(slot, 1) != 1) {
                if (System.nanoTime() - deadline > 0) {
                    return org.junit.jupiter.api.Assertions.fail("no completion");
                }
                Thread.onSpinWait();
            }
            WorkCompletion wc = new WorkCompletion();
            wc.copyFrom(slot[0]);
            return wc;
        }

        @Override
        public void close() {
            id.destroyQp();
            mr.close();
            cq.close();
            pd.close();
        }
    }

    @Test
    void aUdIdResolvesThePeersQpAndADatagramReachesIt() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.UDP); CmId client = cch.createId(PortSpace.UDP)) {
            listen(listener, ipB, port, 4);
            resolve(client, cch, ipB, port);
            UdEp ce = new UdEp(client);
            assertEquals(QpState.RTS, ce.qp.state(), "rdma_create_qp readies a UD QP at once");
            client.connect(new ConnParam().privateData(text("who serves this port?")));
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            assertEquals(180, req.privateData().length, "216 bytes of SIDR_REQ private data less the header");
            assertEquals("who serves this port?", prefix(req.privateData(), 21));
            assertNotNull(req.ahAttr());
            assertEquals(gidA, req.ahAttr().grh().dgid());
            UdEp se = new UdEp(req.id());
            se.qp.postRecv(new RecvWorkRequest().wrId(4).sge(se.mr, 0, 40 + 64));
            req.id().accept(new ConnParam().privateData(text("I do")));
            CmEvent est = expect(cch, CmEventType.ESTABLISHED);
            assertEquals(se.qp.qpn(), est.param().qpNum());
            assertEquals(CmId.UDP_QKEY, est.qkey());
            assertEquals(136, est.privateData().length);
            assertEquals("I do", prefix(est.privateData(), 4));
            assertEquals(gidB, est.ahAttr().grh().dgid());
            try (AddressHandle ah = ce.pd.createAh(est.ahAttr())) {
                ce.mr.segment().setString(0, "datagram", java.nio.charset.StandardCharsets.US_ASCII);
                ce.qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                        .sge(ce.mr, 0, 9).ud(ah, est.param().qpNum(), est.qkey()));
                assertEquals(WcStatus.SUCCESS, ce.poll().status());
                WorkCompletion r = se.poll();
                assertEquals(WcStatus.SUCCESS, r.status(), r::toString);
                assertEquals(ce.qp.qpn(), r.srcQp());
                assertEquals("datagram", se.mr.segment().getString(40, java.nio.charset.StandardCharsets.US_ASCII));
            }
            client.disconnect(); // nothing to take down
            ce.close();
            se.close();
            req.id().close();
        }
    }

    @Test
    void aUdRequestNoOneServesOrThatIsRejectedEndsInUnreachableWithTheSidrStatus() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.UDP); CmId c1 = cch.createId(PortSpace.UDP);
             CmId c2 = cch.createId(PortSpace.UDP)) {
            listen(listener, ipB, port, 4);
            resolve(c1, cch, ipB, port + 1000);
            c1.connect(new ConnParam());
            CmEvent e1 = expect(cch, CmEventType.UNREACHABLE);
            assertEquals(SidrRep.STATUS_UNSUPPORTED, e1.status(), "no listener");
            resolve(c2, cch, ipB, port);
            if (!PROVIDER_GSI) {
                fabric.duplicateNext(MadHeader.ATTR_SIDR_REQ, 1); // answered once, the repeat gets the same answer
            }
            c2.connect(new ConnParam());
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            req.id().reject(text("no"));
            CmEvent e2 = expect(cch, CmEventType.UNREACHABLE);
            assertSame(c2, e2.id());
            assertEquals(SidrRep.STATUS_REJECT, e2.status());
            assertEquals("no", prefix(e2.privateData(), 2));
            req.id().close();
        }
    }

    @Test
    void aSilentPeerEndsAUdRequestInEtimedout() throws Exception {
        try (CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.UDP)) {
            resolve(client, cch, InetAddress.getByName("fd72:646d:6134:6a00::fffc"), 1);
            client.connect(new ConnParam());
            CmEvent e = expect(cch, CmEventType.UNREACHABLE);
            assertEquals(-Errno.ETIMEDOUT, e.status());
        }
    }
}

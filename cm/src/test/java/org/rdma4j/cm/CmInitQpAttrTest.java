// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
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
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * rdma_init_qp_attr: QPs the programs create and move themselves (rping -q's flow), connected by the CM
 * with {@link ConnParam#qpNum}; data must cross them both ways afterwards.
 */
class CmInitQpAttrTest extends CmTestSupport {
    @BeforeAll
    static void devices() {
        setUpDevices("cmq");
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    /** A PD, a CQ, an MR and an RC QP the program made itself and moved to INIT as rping -q does. */
    static final class Own implements AutoCloseable {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final QueuePair qp;

        Own(CmId id) {
            pd = id.context().allocPd();
            cq = id.context().createCq(16);
            mr = pd.regMr(Arena.ofShared().allocate(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE
                    | Access.REMOTE_READ);
            qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq));
            qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(id.portNum()).accessFlags(0));
        }

        void moveWith(CmId id) {
            for (QpState s : new QpState[] {QpState.INIT, QpState.RTR, QpState.RTS}) {
                QpAttr a = id.initQpAttr(s);
                assertEquals(s, a.qpState);
                qp.modify(a);
                assertEquals(s, qp.state());
            }
        }

        WorkCompletion poll() {
            return pollOne(cq);
        }

        @Override
        public void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
        }
    }

    @Test
    void selfCreatedQpsMovedWithInitQpAttrCarrySendsAndReadsBothWays() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> listener.initQpAttr(QpState.INIT)).errno(), "a listener has no connection");
            resolve(client, cch, ipB, port);
            // before the connection's values are known: INIT only, without remote access
            QpAttr init = client.initQpAttr(QpState.INIT);
            assertEquals(QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS,
                    init.mask());
            assertEquals(0, init.qpAccessFlags);
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> client.initQpAttr(QpState.RTR)).errno(), "RTR before the REP");
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> client.initQpAttr(QpState.SQD)).errno());

            try (Own c = new Own(client)) {
                client.connect(new ConnParam().qpNum(c.qp.qpn()).responderResources(1).initiatorDepth(1)
                        .retryCount(7).rnrRetryCount(7));
                CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
                CmId child = req.id();
                assertEquals(c.qp.qpn(), req.param().qpNum());
                try (Own s = new Own(child)) {
                    // the passive side moves its QP before it accepts (rping -q's order)
                    QpAttr rtr = child.initQpAttr(QpState.RTR);
                    assertEquals(c.qp.qpn(), rtr.destQpNum);
                    assertEquals(QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN
                            | QpAttrMask.RQ_PSN | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER, rtr.mask());
                    assertEquals(Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC,
                            child.initQpAttr(QpState.INIT).qpAccessFlags, "the REQ asked for read resources");
                    s.moveWith(child);
                    s.qp.postRecv(new RecvWorkRequest().wrId(5).sge(s.mr, 0, 64));
                    child.accept(new ConnParam().qpNum(s.qp.qpn()).responderResources(1).initiatorDepth(1));

                    CmEvent resp = expect(cch, CmEventType.CONNECT_RESPONSE);
                    assertEquals(s.qp.qpn(), resp.param().qpNum());
                    assertNull(client.qp(), "the CM moves no QP of its own");
                    c.moveWith(client);
                    QpAttr cq = c.qp.query();
                    QpAttr sq = s.qp.query();
                    assertEquals(cq.sqPsn, sq.rqPsn, "the REQ's starting PSN");
                    assertEquals(sq.sqPsn, cq.rqPsn, "the REP's starting PSN");
                    assertEquals(7, cq.retryCnt);
                    client.establish();
                    expect(sch, CmEventType.ESTABLISHED);

                    c.mr.segment().setString(0, "ping -q", java.nio.charset.StandardCharsets.US_ASCII);
                    c.qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                            .sge(c.mr, 0, 8));
                    assertEquals(WcStatus.SUCCESS, c.poll().status());
                    WorkCompletion r = s.poll();
                    assertEquals(WcStatus.SUCCESS, r.status(), r::toString);
                    assertEquals("ping -q", s.mr.segment().getString(0, java.nio.charset.StandardCharsets.US_ASCII));

                    // the server READs from the client: the client's INIT gave remote read access
                    for (int i = 0; i < 128; i++) {
                        c.mr.segment().set(ValueLayout.JAVA_BYTE, 1024 + i, (byte) (3 * i + 1));
                    }
                    s.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_READ).flags(SendFlag.SIGNALED)
                            .sge(s.mr, 2048, 128).rdma(c.mr.address() + 1024, c.mr.rkey()));
                    WorkCompletion rd = s.poll();
                    assertEquals(WcStatus.SUCCESS, rd.status(), rd::toString);
                    assertArrayEquals(c.mr.segment().asSlice(1024, 128).toArray(ValueLayout.JAVA_BYTE),
                            s.mr.segment().asSlice(2048, 128).toArray(ValueLayout.JAVA_BYTE));

                    // rping -q's disconnect: its own QP to ERROR first, then the DREQ
                    c.qp.modify(new QpAttr().state(QpState.ERR));
                    client.disconnect();
                    expect(sch, CmEventType.DISCONNECTED);
                    child.disconnect();
                    expect(cch, CmEventType.DISCONNECTED);
                    child.close();
                }
            }
        }
    }
}

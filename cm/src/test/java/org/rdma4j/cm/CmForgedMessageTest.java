// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdma4j.cm.CmForgery.dreq;
import static org.rdma4j.cm.CmForgery.drep;
import static org.rdma4j.cm.CmForgery.lap;
import static org.rdma4j.cm.CmForgery.mra;
import static org.rdma4j.cm.CmForgery.rej;
import static org.rdma4j.cm.CmForgery.rtu;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.CmMra;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * A third party forges CM messages against an established connection (the fake QP1 lets it claim any
 * source GID): from the peer's own GID (a program on the peer's host) knowing one of the two
 * communication IDs, both IDs but not the QPN or the CA GUID, or from another GID knowing everything.
 * Nothing it sends changes the connection: every message is dropped and counted, no event comes, and
 * data keeps moving both ways; the real disconnect still works.
 */
class CmForgedMessageTest extends CmTestSupport {
    @BeforeAll
    static void devices() {
        setUpDevices("cmf");
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    @Test
    void forgedRejDreqDrepRtuMraLapWithoutEverythingTheConnectionMatchesAreDroppedAndDataKeepsMoving()
            throws Exception {
        faults();
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
            Ep se = new Ep(child);
            child.accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            int c = client.conn.localCommId;
            int s = child.conn.localCommId;
            int cq = ce.qp.qpn();
            int sq = se.qp.qpn();
            long cGuid = client.conn.caGuid;
            long sGuid = child.conn.caGuid;
            Gid elsewhere = Gid.of(InetAddress.getByName("10.77.0.9"));

            List<byte[]> toServer = List.of(
                    // the server's ID (say it leaked), the client's guessed: from the client's own GID
                    rej(c + 1, s, CmRej.MSG_REP, CmRej.REASON_CONSUMER_DEFINED, 0),
                    rej(c + 1, s, CmRej.MSG_OTHER, CmRej.REASON_CONSUMER_DEFINED, 0),
                    rej(0, s, CmRej.MSG_REQ, CmRej.REASON_CONSUMER_DEFINED, 0), // a REJ of a REQ: long past
                    dreq(c + 1, s, sq), drep(c + 1, s), rtu(c + 1, s), mra(c + 1, s, CmMra.MSG_REP),
                    // both IDs, but a timeout REJ naming another CA GUID, a DREQ naming another QPN, a LAP
                    rej(c, s, CmRej.MSG_OTHER, CmRej.REASON_TIMEOUT, cGuid ^ 1),
                    dreq(c, s, sq ^ 1), lap(c, s));
            List<byte[]> toClient = List.of(
                    rej(s + 1, c, CmRej.MSG_REP, CmRej.REASON_CONSUMER_DEFINED, 0),
                    rej(s, c, CmRej.MSG_REQ, CmRej.REASON_CONSUMER_DEFINED, 0),
                    dreq(s + 1, c, cq), drep(s + 1, c), mra(s, c, CmMra.MSG_REQ), mra(s + 1, c, CmMra.MSG_REP),
                    rej(s, c, CmRej.MSG_OTHER, CmRej.REASON_TIMEOUT, sGuid ^ 1),
                    dreq(s, c, cq ^ 1), lap(s, c));
            // everything right, from an address that is not the peer's
            List<byte[]> fromElsewhere = List.of(
                    rej(c, s, CmRej.MSG_REP, CmRej.REASON_CONSUMER_DEFINED, 0),
                    rej(c, s, CmRej.MSG_OTHER, CmRej.REASON_TIMEOUT, cGuid),
                    dreq(c, s, sq), drep(c, s), rtu(c, s), mra(c, s, CmMra.MSG_REP));
            Map<String, Long> before = CmId.droppedMessages();
            long dropped = CmForgery.dropped();
            for (byte[] m : toServer) {
                fabric.inject(gidB, gidA, m);
            }
            for (byte[] m : toClient) {
                fabric.inject(gidA, gidB, m);
            }
            for (byte[] m : fromElsewhere) {
                fabric.inject(gidB, elsewhere, m);
            }
            // a DREQ that names no connection is answered with a DREP (cm.c does so); the two that went
            // to a real peer's GID come back to the other side and are dropped there too
            long want = toServer.size() + toClient.size() + fromElsewhere.size() + 2;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (CmForgery.dropped() - dropped < want) {
                assertTrue(System.nanoTime() - deadline < 0, () -> "dropped " + (CmForgery.dropped() - dropped)
                        + " of " + want + " forged messages");
                Thread.sleep(1);
            }
            assertEquals(want, CmForgery.dropped() - dropped, "each forgery is counted once");
            Map<String, Long> after = CmId.droppedMessages();
            assertEquals(9, after.get("REJ") - before.get("REJ"));
            assertEquals(5, after.get("DREQ") - before.get("DREQ"));
            assertEquals(3 + 2, after.get("DREP") - before.get("DREP"), "3 forged, 2 drawn by forged DREQs");
            assertEquals(2, after.get("LAP") - before.get("LAP"));
            assertNull(sch.getEvent(0, TimeUnit.SECONDS), "no event on the server");
            assertNull(cch.getEvent(0, TimeUnit.SECONDS), "no event on the client");
            assertEquals(CmId.State.ESTABLISHED, CmEngine.INSTANCE.read(() -> client.state));
            assertEquals(CmId.State.ESTABLISHED, CmEngine.INSTANCE.read(() -> child.state));
            sendBothWays(ce, se);

            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            child.disconnect();
            assertEquals(0, expect(cch, CmEventType.DISCONNECTED).status(), "the real DREP");
            ce.close();
            se.close();
            child.close();
        }
    }

    @Test
    void localCommunicationIdsAreNotSequentialNorNearEachOther() throws Exception {
        int port = port();
        List<CmId> ids = new ArrayList<>();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 64);
            for (int i = 0; i < 16; i++) {
                CmId client = cch.createId(PortSpace.TCP);
                ids.add(client);
                resolve(client, cch, ipB, port);
                client.connect(new ConnParam().qpNum(100 + i));
                ids.add(expect(sch, CmEventType.CONNECT_REQUEST).id());
            }
            // the IDs in the order they were given (client, server, client, ...): with a counter (or a
            // counter XORed with a constant, as cm.c) one ID tells the next within a few low bits
            int near = 0;
            for (int i = 1; i < ids.size(); i++) {
                if ((ids.get(i).conn.localCommId ^ ids.get(i - 1).conn.localCommId) >>> 16 == 0) {
                    near++;
                }
            }
            assertTrue(near <= 1, near + " of " + (ids.size() - 1) + " consecutive local IDs differ only in their low 16 bits");
        } finally {
            ids.forEach(CmId::close);
        }
    }

    /** A SEND each way on the connection; both complete. */
    static void sendBothWays(Ep a, Ep b) {
        for (Ep[] p : new Ep[][] {{a, b}, {b, a}}) {
            p[1].qp.postRecv(new RecvWorkRequest().wrId(7).sge(p[1].mr, 0, 64));
            p[0].qp.postSend(new SendWorkRequest().wrId(8).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(p[0].mr, 0, 16));
            assertEquals(WcStatus.SUCCESS, p[0].poll().status(), "the SEND completes");
            assertEquals(WcStatus.SUCCESS, p[1].poll().status(), "the receive completes");
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/** Connection set-up and tear-down between two soft devices, the MADs over the fake QP1s. */
class CmConnectTest extends CmTestSupport {
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    @BeforeAll
    static void devices() {
        setUpDevices("cmc");
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
    void connectAndAcceptCarryPrivateDataBothWaysAndASendAndAWriteCrossTheConnectedQps() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            assertEquals(gidA, client.sourceGid());
            assertEquals(gidB, client.destinationGid(), "RoCEv2: the destination GID is the IP address");
            Ep ce = new Ep(client);
            assertEquals(QpState.INIT, ce.qp.state());
            client.connect(new ConnParam().privateData(text("hello from the client")).responderResources(2)
                    .initiatorDepth(3).retryCount(5).rnrRetryCount(6));

            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            CmId child = req.id();
            assertSame(listener, req.listenId());
            assertEquals(0, req.status());
            assertEquals(56, req.privateData().length, "92 bytes of REQ private data less rdma_cm's 36-byte header");
            assertEquals("hello from the client", prefix(req.privateData(), 21));
            assertEquals(ce.qp.qpn(), req.param().qpNum());
            assertEquals(2, req.param().responderResources());
            assertEquals(3, req.param().initiatorDepth());
            assertEquals(5, req.param().retryCount());
            assertEquals(6, req.param().rnrRetryCount());
            assertEquals(new InetSocketAddress(ipA, client.localAddress().getPort()), child.remoteAddress(),
                    "the source address and port come from rdma_cm's header");
            assertEquals(new InetSocketAddress(ipB, port), child.localAddress());
            assertSame(sch, child.channel());

            Ep se = new Ep(child);
            se.qp.postRecv(new RecvWorkRequest().wrId(7).sge(se.mr, 0, 64));
            byte[] rep = new byte[40];
            MemorySegment r = MemorySegment.ofArray(rep);
            r.set(BE_LONG, 0, se.mr.address() + 1024);
            r.set(BE_INT, 8, se.mr.rkey());
            System.arraycopy(text("welcome"), 0, rep, 12, 7);
            child.accept(new ConnParam().privateData(rep).responderResources(3).initiatorDepth(2));

            CmEvent est = expect(cch, CmEventType.ESTABLISHED);
            assertEquals(196, est.privateData().length);
            assertEquals("welcome", new String(est.privateData(), 12, 7, java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals(se.qp.qpn(), est.param().qpNum());
            expect(sch, CmEventType.ESTABLISHED);
            assertEquals(QpState.RTS, ce.qp.state());
            assertEquals(QpState.RTS, se.qp.state());
            org.rdma4j.verbs.QpAttr ca = ce.qp.query();
            org.rdma4j.verbs.QpAttr sa = se.qp.query();
            assertEquals(se.qp.qpn(), ca.destQpNum);
            assertEquals(ce.qp.qpn(), sa.destQpNum);
            assertEquals(ca.sqPsn, sa.rqPsn, "the REQ's starting PSN");
            assertEquals(sa.sqPsn, ca.rqPsn, "the REP's starting PSN");
            assertEquals(ca.pathMtu, sa.pathMtu, "the REQ's path MTU");
            assertEquals(5, ca.retryCnt);
            assertEquals(5, sa.retryCnt, "the passive side retries as the REQ asks");
            assertEquals(6, sa.rnrRetry, "the REQ's RNR retry count");
            assertEquals(7, ca.rnrRetry, "the REP's RNR retry count");
            assertEquals(3, ca.maxRdAtomic, "the active side's initiator depth: the REP's responder resources");
            assertEquals(2, ca.maxDestRdAtomic, "the active side's responder resources: the REP's initiator depth");
            assertEquals(3, sa.maxDestRdAtomic);
            assertEquals(2, sa.maxRdAtomic);
            assertEquals(CmId.DEFAULT_ACK_TIMEOUT, sa.timeout, "the REQ's local ACK timeout");

            // a SEND
            ce.mr.segment().setString(0, "ping", java.nio.charset.StandardCharsets.US_ASCII);
            ce.qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(ce.mr, 0, 5));
            WorkCompletion s = ce.poll();
            assertEquals(WcStatus.SUCCESS, s.status(), s::toString);
            WorkCompletion rc = se.poll();
            assertEquals(WcStatus.SUCCESS, rc.status(), rc::toString);
            assertEquals(WcOpcode.RECV, rc.opcode());
            assertEquals(5, rc.byteLen());
            assertEquals("ping", se.mr.segment().getString(0, java.nio.charset.StandardCharsets.US_ASCII));

            // a WRITE to where the REP's private data said
            long addr = MemorySegment.ofArray(est.privateData()).get(BE_LONG, 0);
            int rkey = MemorySegment.ofArray(est.privateData()).get(BE_INT, 8);
            for (int i = 0; i < 64; i++) {
                ce.mr.segment().set(ValueLayout.JAVA_BYTE, 100 + i, (byte) (i * 7 + 1));
            }
            ce.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                    .sge(ce.mr, 100, 64).rdma(addr, rkey));
            WorkCompletion w = ce.poll();
            assertEquals(WcStatus.SUCCESS, w.status(), w::toString);
            assertArrayEquals(ce.mr.segment().asSlice(100, 64).toArray(ValueLayout.JAVA_BYTE),
                    se.mr.segment().asSlice(1024, 64).toArray(ValueLayout.JAVA_BYTE));

            // a receive still posted when the connection goes is flushed
            ce.qp.postRecv(new RecvWorkRequest().wrId(9).sge(ce.mr, 2048, 64));
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            assertEquals(QpState.RTS, se.qp.state(), "the DREQ leaves the passive side's QP as it is (cma.c)");
            child.disconnect(); // both sides disconnect: the DREP goes now
            assertEquals(0, expect(cch, CmEventType.DISCONNECTED).status());
            assertEquals(QpState.ERR, ce.qp.state());
            assertEquals(QpState.ERR, se.qp.state());
            WorkCompletion flushed = ce.poll();
            assertEquals(9, flushed.wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            expect(sch, CmEventType.TIMEWAIT_EXIT);
            client.disconnect(); // nothing: already disconnected
            assertEquals(0, cch.unackedEvents());
            ce.close();
            se.close();
            child.close();
        }
    }

    @Test
    void theActiveSideWithoutAQpGetsConnectResponseAndEstablishesItself() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            assertThrows(VerbsException.class, () -> client.connect(new ConnParam()), "no QP and no qpNum");
            client.connect(new ConnParam().qpNum(0x1234));
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            assertEquals(0x1234, req.param().qpNum());
            req.id().accept(new ConnParam().qpNum(0x4321));
            CmEvent resp = expect(cch, CmEventType.CONNECT_RESPONSE);
            assertEquals(0x4321, resp.param().qpNum());
            client.establish();
            expect(sch, CmEventType.ESTABLISHED);
            req.id().disconnect();
            expect(cch, CmEventType.DISCONNECTED);
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            req.id().close();
        }
    }

    @Test
    void migrateMovesTheQueuedEventsOfARequestsIdToItsNewChannel() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmEventChannel own = new CmEventChannel(); CmId listener = sch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            CmId client = cch.createId(PortSpace.TCP);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            // the client gives up before the server takes the request: its REJ queues REJECTED for the
            // request's id behind the CONNECT_REQUEST on the listener's channel
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (sch.queued() < 1) {
                assertTrue(System.nanoTime() - deadline < 0, "no CONNECT_REQUEST queued");
                Thread.sleep(1);
            }
            ce.close();
            client.close();
            while (sch.queued() < 2) {
                assertTrue(System.nanoTime() - deadline < 0, "no second event queued: " + sch.queued());
                Thread.sleep(1);
            }
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            CmId child = req.id();
            child.migrate(own);
            assertSame(own, child.channel());
            assertNull(sch.getEvent(0, TimeUnit.SECONDS), "the request's event moved with it");
            CmEvent rej = own.getEvent(WAIT_S, TimeUnit.SECONDS);
            assertNotNull(rej, "the REJECTED that was queued before the migrate");
            assertSame(child, rej.id());
            assertEquals(CmEventType.REJECTED, rej.type());
            assertEquals(1, own.unackedEvents());
            rej.ack();
            assertEquals(0, own.unackedEvents(), "the ack counts on the channel the event moved to");
            assertEquals(0, sch.unackedEvents());
            own.close();
            assertEquals(Errno.EBADF, assertThrows(VerbsException.class, () -> child.migrate(own)).errno(),
                    "a closed channel");
            child.close();
        }
    }

    @Test
    void aRejectCarriesItsPrivateDataAndReason28() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            assertThrows(VerbsException.class, () -> req.id().reject(new byte[149]), "149 > 148 bytes");
            req.id().reject(text("go away"));
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.status());
            assertEquals(148, rej.privateData().length);
            assertEquals("go away", prefix(rej.privateData(), 7));
            assertEquals(QpState.ERR, ce.qp.state());
            assertThrows(VerbsException.class, () -> req.id().accept(new ConnParam()), "rejected: no accept");
            ce.close();
            req.id().close();
        }
    }

    @Test
    void noListenerOnThePortIsRejectedWithReason8() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId other = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(other, ipB, port, 8); // B's CM runs, but listens on another port
            resolve(client, cch, ipB, port + 1000);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertEquals(CmRej.REASON_INVALID_SERVICE_ID, rej.status());
            ce.close();
        }
    }

    @Test
    void aSilentPeerEndsInUnreachableWithEtimedoutAfterTheRetries() throws Exception {
        try (CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.TCP)) {
            if (!PROVIDER_GSI) {
                fabric.resetCounts();
            }
            resolve(client, cch, java.net.InetAddress.getByName("fd72:646d:6134:6a00::fffe"), 7174);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmEvent e = expect(cch, CmEventType.UNREACHABLE);
            assertEquals(-Errno.ETIMEDOUT, e.status());
            if (!PROVIDER_GSI) {
                assertEquals(1 + 3, fabric.sent(MadHeader.ATTR_REQ), "the REQ and its 3 retries");
            }
            assertEquals(QpState.ERR, ce.qp.state());
            ce.close();
        }
    }

    private void connectThrough(Runnable faults, int attr, int atLeast) throws Exception {
        int port = port();
        faults().resetCounts();
        faults.run();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam().privateData(text("x")));
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            Ep se = new Ep(req.id());
            req.id().accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED); // and not a second CONNECT_REQUEST before it
            assertTrue(faults().sent(attr) >= atLeast, () -> MadHeader.attributeName(attr) + " sent "
                    + faults().sent(attr) + " times");
            req.id().disconnect();
            expect(cch, CmEventType.DISCONNECTED);
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            expect(sch, CmEventType.TIMEWAIT_EXIT);
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            ce.close();
            se.close();
            req.id().close();
        }
    }

    @Test
    void aLostReqIsSentAgain() throws Exception {
        connectThrough(() -> faults().dropNext(MadHeader.ATTR_REQ, 1), MadHeader.ATTR_REQ, 2);
    }

    @Test
    void aLostRepIsSentAgain() throws Exception {
        connectThrough(() -> faults().dropNext(MadHeader.ATTR_REP, 1), MadHeader.ATTR_REP, 2);
    }

    @Test
    void aLostRtuIsRecoveredByTheRepeatedRep() throws Exception {
        connectThrough(() -> faults().dropNext(MadHeader.ATTR_RTU, 1), MadHeader.ATTR_RTU, 2);
    }

    @Test
    void duplicatedReqRepRtuMakeOneConnection() throws Exception {
        connectThrough(() -> {
            faults().duplicateNext(MadHeader.ATTR_REQ, 1);
            faults().duplicateNext(MadHeader.ATTR_REP, 1);
            faults().duplicateNext(MadHeader.ATTR_RTU, 1);
        }, MadHeader.ATTR_REQ, 1);
    }

    @Test
    void aLostDreqIsSentAgainAndALostDrepEndsInDisconnectedAnyway() throws Exception {
        connectThrough(() -> {
            faults().dropNext(MadHeader.ATTR_DREQ, 1);
        }, MadHeader.ATTR_REQ, 1);
        assertTrue(faults().sent(MadHeader.ATTR_DREQ) >= 2);
        connectThrough(() -> faults().dropNext(MadHeader.ATTR_DREP, 1), MadHeader.ATTR_REQ, 1);
        assertTrue(faults().sent(MadHeader.ATTR_DREQ) >= 2, "the DREQ was repeated and answered again");
    }

    @Test
    void aDelayedRepThatArrivesTwiceStillMakesOneConnection() throws Exception {
        connectThrough(() -> faults().holdNext(MadHeader.ATTR_REP, 1), MadHeader.ATTR_REP, 2);
        faults().releaseHeld(); // the stale REP of a finished connection goes nowhere
    }

    @Test
    void requestsBeyondTheBacklogAreRejectedUntilTheyAreTaken() throws Exception {
        int port = port();
        faults().resetCounts();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId c1 = cch.createId(PortSpace.TCP);
             CmId c2 = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 1);
            resolve(c1, cch, ipB, port);
            resolve(c2, cch, ipB, port);
            c1.connect(new ConnParam().qpNum(1000));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (faults().sent(MadHeader.ATTR_MRA) == 0) { // the first request is in (and MRAed)
                assertTrue(System.nanoTime() - deadline < 0, "no MRA for the first request");
                Thread.sleep(1);
            }
            c2.connect(new ConnParam().qpNum(1001));
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertSame(c2, rej.id());
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.status());
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            req.id().reject(null);
            CmEvent rej1 = expect(cch, CmEventType.REJECTED);
            assertSame(c1, rej1.id());
            req.id().close();
        }
    }

    @Test
    void aGetEventBlockedOnTheChannelReturnsWhenTheChannelCloses() throws Exception {
        CmEventChannel ch = new CmEventChannel();
        Throwable[] seen = new Throwable[1];
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                ch.getEvent(10, TimeUnit.MINUTES);
            } catch (Throwable e) {
                seen[0] = e;
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (t.getState() != Thread.State.TIMED_WAITING) {
            assertTrue(System.nanoTime() - deadline < 0, "the waiter did not block");
            Thread.sleep(1);
        }
        ch.close();
        t.join(TimeUnit.SECONDS.toMillis(WAIT_S));
        assertTrue(!t.isAlive(), "the waiter still waits");
        VerbsException e = (VerbsException) seen[0];
        assertNotNull(e);
        assertEquals(Errno.EBADF, e.errno());
        assertNull(new CmEventChannel().getEvent(0, TimeUnit.SECONDS), "no event: null, not a wait");
        assertThrows(VerbsException.class, () -> ch.createId(PortSpace.TCP));
    }

    @Test
    void aPeerThatNeverSendsTheRtuEndsInUnreachableThereAndRejectedHere() throws Exception {
        int port = port();
        faults().clearFaults();
        faults().dropNext(MadHeader.ATTR_RTU, 1000);
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            Ep se = new Ep(req.id());
            req.id().accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            CmEvent e = expect(sch, CmEventType.UNREACHABLE);
            assertEquals(-Errno.ETIMEDOUT, e.status());
            assertEquals(QpState.ERR, se.qp.state());
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertEquals(CmRej.REASON_TIMEOUT, rej.status(), "the passive side gave up: REJ timeout");
            assertEquals(QpState.ERR, ce.qp.state());
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            ce.close();
            se.close();
            req.id().close();
        } finally {
            faults().clearFaults();
        }
    }

    @Test
    void aPeerThatVanishedAfterEstablishedMakesDisconnectEndInEtimedout() throws Exception {
        faults();
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            Ep se = new Ep(req.id());
            req.id().accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            faults().resetCounts();
            faults().dropNext(MadHeader.ATTR_DREQ, 1000); // the peer is gone: nothing reaches it
            ce.qp.postRecv(new RecvWorkRequest().wrId(5).sge(ce.mr, 0, 64));
            client.disconnect();
            CmEvent d = expect(cch, CmEventType.DISCONNECTED);
            assertEquals(-Errno.ETIMEDOUT, d.status());
            assertEquals(1 + 3, faults().sent(MadHeader.ATTR_DREQ), "the DREQ and its 3 retries");
            WorkCompletion flushed = ce.poll();
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status(), "outstanding work is flushed");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            ce.close();
            se.close();
            req.id().close(); // established here: its one DREQ is lost too; the id goes at once
        } finally {
            faults().clearFaults();
        }
    }

    @Test
    void disconnectFromThePassiveSideReachesBoth() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            Ep se = new Ep(req.id());
            req.id().accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            req.id().disconnect();
            expect(cch, CmEventType.DISCONNECTED);
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            assertEquals(QpState.ERR, ce.qp.state());
            assertEquals(QpState.ERR, se.qp.state());
            ce.close();
            se.close();
            req.id().close();
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.CmReq;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.VerbsException;

/** Destroying ids in every state, bad calls, bad addresses and hostile MADs. */
@SuppressWarnings("try") // ids are closed on purpose inside the blocks that also close them
class CmDestroyTest extends CmTestSupport {
    @BeforeAll
    static void devices() {
        setUpDevices("cmd");
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
    void idsBeforeConnectingCloseQuietlyInEveryState() throws Exception {
        try (CmEventChannel ch = new CmEventChannel()) {
            CmId idle = ch.createId(PortSpace.TCP);
            idle.close();
            idle.close(); // idempotent
            assertThrows(VerbsException.class, () -> idle.resolveRoute(10));
            VerbsException e = assertThrows(VerbsException.class, () -> idle.listen(1));
            assertEquals(Errno.EBADF, e.errno());

            CmId bound = ch.createId(PortSpace.TCP);
            bound.bindAddr(new InetSocketAddress(ipA, 0));
            assertNotNull(bound.context());
            bound.close();

            CmId resolved = ch.createId(PortSpace.TCP);
            resolved.resolveAddr(new InetSocketAddress(ipA, 0), new InetSocketAddress(ipB, 9), 100);
            expect(ch, CmEventType.ADDR_RESOLVED);
            resolved.close();

            CmId routed = ch.createId(PortSpace.TCP);
            routed.resolveAddr(null, new InetSocketAddress(ipB, 9), 100);
            expect(ch, CmEventType.ADDR_RESOLVED);
            routed.resolveRoute(100);
            expect(ch, CmEventType.ROUTE_RESOLVED);
            routed.close();

            CmId listening = ch.createId(PortSpace.TCP);
            listening.bindAddr(new InetSocketAddress(ipB, 7174));
            listening.listen(4);
            listening.close();
            CmId again = ch.createId(PortSpace.TCP);
            again.bindAddr(new InetSocketAddress(ipB, 7174)); // the port is free again
            again.close();

            CmId wildcard = ch.createId(PortSpace.TCP);
            wildcard.listen(0); // unbound: a wildcard address and a free port, on every device
            wildcard.close();
            assertNull(ch.getEvent(0, TimeUnit.SECONDS), "closing quietly: no events");
        }
    }

    @Test
    void aPortHeldByAListenerIsInUse() throws Exception {
        try (CmEventChannel ch = new CmEventChannel(); CmId a = ch.createId(PortSpace.TCP);
             CmId b = ch.createId(PortSpace.TCP); CmId c = ch.createId(PortSpace.TCP)) {
            a.bindAddr(new InetSocketAddress(ipB, 5000));
            VerbsException e = assertThrows(VerbsException.class, () -> b.bindAddr(new InetSocketAddress(ipB, 5000)));
            assertEquals(Errno.EADDRINUSE, e.errno());
            e = assertThrows(VerbsException.class, () -> c.bindAddr(new InetSocketAddress("::", 5000)));
            assertEquals(Errno.EADDRINUSE, e.errno(), "a wildcard overlaps every address");
            b.bindAddr(new InetSocketAddress(ipA, 5000)); // another address: fine
        }
    }

    @Test
    void addressesNoDeviceHasAreRefused() throws Exception {
        try (CmEventChannel ch = new CmEventChannel(); CmId a = ch.createId(PortSpace.TCP);
             CmId b = ch.createId(PortSpace.TCP)) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> a.bindAddr(new InetSocketAddress("fd00:dead::1", 1)));
            assertEquals(99, e.errno(), "EADDRNOTAVAIL");
            boolean anyIpv4 = DeviceMatch.find(CmEngine.INSTANCE, null, InetAddress.getByName("198.51.100.7")) != null;
            Assumptions.assumeFalse(anyIpv4, "a device with an IPv4 GID exists in this JVM");
            SourceRoute.Router kernel = SourceRoute.router;
            SourceRoute.router = dst -> InetAddress.getByName("198.51.100.1"); // as if a default route left from it
            try {
                b.resolveAddr(null, new InetSocketAddress("198.51.100.7", 1), 100);
            } finally {
                SourceRoute.router = kernel;
            }
            CmEvent err = expect(ch, CmEventType.ADDR_ERROR);
            assertEquals(-Errno.ENODEV, err.status());
        }
    }

    /** A connection whose server took the CONNECT_REQUEST and has not answered yet. */
    private record Pending(CmEventChannel sch, CmEventChannel cch, CmId listener, CmId client, CmId child, Ep ce) {
    }

    private Pending pending(CmEventChannel sch, CmEventChannel cch, CmId listener, CmId client) throws Exception {
        int port = port();
        listen(listener, ipB, port, 8);
        resolve(client, cch, ipB, port);
        Ep ce = new Ep(client);
        if (!PROVIDER_GSI) {
            fabric.resetCounts();
        }
        client.connect(new ConnParam());
        CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!PROVIDER_GSI && fabric.sent(MadHeader.ATTR_MRA) == 0) { // the client knows the server's comm id
            assertTrue(System.nanoTime() - deadline < 0, "no MRA");
            Thread.sleep(1);
        }
        return new Pending(sch, cch, listener, client, req.id(), ce);
    }

    @Test
    void closingTheActiveIdWhileItsRequestWaitsRejectsItAtThePeer() throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Pending p = pending(sch, cch, listener, client);
            p.ce().close();
            client.close();
            CmEvent rej = expect(sch, CmEventType.REJECTED);
            assertEquals(p.child(), rej.id());
            assertEquals(CmRej.REASON_TIMEOUT, rej.status(), "cm.c's REJ for a REQ given up");
            assertThrows(VerbsException.class, () -> p.child().accept(new ConnParam().qpNum(5)));
            p.child().close();
            assertNull(cch.getEvent(0, TimeUnit.SECONDS), "a closed id gets no events");
        }
    }

    @Test
    void closingTheActiveIdWithASilentPeerSendsNothingMoreAndEndsQuietly() throws Exception {
        try (CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.TCP)) {
            resolve(client, cch, InetAddress.getByName("fd72:646d:6134:6a00::fffd"), 1);
            client.connect(new ConnParam().qpNum(77));
            client.close();
            assertNull(cch.getEvent(0, TimeUnit.SECONDS));
        }
    }

    @Test
    void closingTheRequestsIdBeforeAnsweringRejectsWith28() throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Pending p = pending(sch, cch, listener, client);
            p.child().close();
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.status());
            assertEquals(QpState.ERR, p.ce().qp.state());
            p.ce().close();
        }
    }

    @Test
    void closingTheListenerLeavesItsTakenRequestsAlive() throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Pending p = pending(sch, cch, listener, client);
            listener.close();
            Ep se = new Ep(p.child());
            p.child().accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            client.close(); // established: a DREQ
            expect(sch, CmEventType.DISCONNECTED);
            assertEquals(QpState.ERR, p.ce().qp.state(), "destroying an established id moves its QP to ERROR");
            se.close();
            p.ce().close();
            p.child().close();
        }
    }

    @Test
    void closingTheAcceptedIdBeforeTheRtuRejectsTheConnectionAtThePeer() throws Exception {
        faults();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Pending p = pending(sch, cch, listener, client);
            faults().dropNext(MadHeader.ATTR_RTU, 100); // the server stays in REP_SENT
            p.child().accept(new ConnParam().qpNum(4242));
            expect(cch, CmEventType.ESTABLISHED);
            p.child().close();
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.status());
            assertEquals(QpState.ERR, p.ce().qp.state());
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            faults().clearFaults();
            p.ce().close();
        }
    }

    @Test
    void closingTheEstablishedPassiveIdDisconnectsThePeer() throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Pending p = pending(sch, cch, listener, client);
            p.child().accept(new ConnParam().qpNum(4243));
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            p.child().close();
            expect(cch, CmEventType.DISCONNECTED);
            client.disconnect(); // answers the DREQ (DREP), as rdma_disconnect does
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            p.ce().close();
        }
    }

    @Test
    void closingAnActiveIdThatHasTheRepButNoRtuYetRejectsAtThePeer() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            client.connect(new ConnParam().qpNum(55)); // no QP: the program establishes (REP_RCVD until then)
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            req.id().accept(new ConnParam().qpNum(66));
            expect(cch, CmEventType.CONNECT_RESPONSE);
            client.close();
            CmEvent rej = expect(sch, CmEventType.REJECTED);
            assertEquals(req.id(), rej.id());
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.status());
            req.id().close();
            assertNull(cch.getEvent(0, TimeUnit.SECONDS), "a closed id gets no events");
        }
    }

    @Test
    void closingIdsWhileTheyDisconnectOrWaitInTimewaitIsQuiet() throws Exception {
        faults();
        for (boolean dreqLost : new boolean[] {true, false}) {
            try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
                 CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
                Pending p = pending(sch, cch, listener, client);
                Ep se = new Ep(p.child());
                p.child().accept(new ConnParam());
                expect(cch, CmEventType.ESTABLISHED);
                expect(sch, CmEventType.ESTABLISHED);
                if (dreqLost) {
                    faults().dropNext(MadHeader.ATTR_DREQ, 1000);
                    client.disconnect(); // DREQ_SENT: its DREQs go nowhere
                    client.close();      // released at once, without events
                    p.child().close();   // established: its own DREQ (one, as cm_destroy_id) is lost too
                } else {
                    client.disconnect();
                    expect(sch, CmEventType.DISCONNECTED);
                    p.child().disconnect(); // the DREP: both sides are in TIMEWAIT now
                    expect(cch, CmEventType.DISCONNECTED);
                    client.close();
                    p.child().close();
                }
                assertNull(cch.getEvent(0, TimeUnit.SECONDS), "a closed id gets no events");
                p.ce().close();
                se.close();
            } finally {
                faults().clearFaults();
            }
            awaitNoAgents(); // every id let its agent go
            assertEquals(0, CmEngine.INSTANCE.connectionCount(), "nothing left in the tables");
        }
    }

    @Test
    void aPortThatGoesAwayGivesDeviceRemovalToItsIdsAndThePeerTimesOut() throws Exception {
        faults();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Pending p = pending(sch, cch, listener, client);
            Ep se = new Ep(p.child());
            fabric.closePort(gidB); // B's QP1 is gone, as when its device is removed
            java.util.Set<CmId> removed = new java.util.HashSet<>();
            removed.add(expect(sch, CmEventType.DEVICE_REMOVAL).id());
            removed.add(expect(sch, CmEventType.DEVICE_REMOVAL).id());
            assertEquals(java.util.Set.of(listener, p.child()), removed);
            assertEquals(QpState.ERR, se.qp.state(), "the QP's work flushes");
            CmEvent e = expect(cch, CmEventType.UNREACHABLE); // nothing answers the REQ any more
            assertEquals(-Errno.ETIMEDOUT, e.status());
            assertThrows(VerbsException.class, () -> p.child().accept(new ConnParam()));
            se.close();
            p.ce().close();
            p.child().close();
        }
    }

    @Test
    void malformedMadsAreDroppedAndCountedAndTheAgentKeepsWorking() throws Exception {
        faults();
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            byte[] ok = new byte[256];
            ok[0] = 1;
            ok[1] = 7;
            ok[2] = 2;
            ok[3] = 3;
            ok[17] = (byte) MadHeader.ATTR_REQ;
            ok[CmReq.OFFSET74] = 3 << 4;
            ok[36] = 0x01; // service id 0x0106_pppp without an rdma_cm header
            ok[37] = 0x06;
            ok[38] = (byte) (port >>> 8);
            ok[39] = (byte) port;
            byte[][] bad = new byte[6][];
            for (int i = 0; i < bad.length; i++) {
                bad[i] = ok.clone();
            }
            bad[0][1] = 4;                       // another class
            bad[1][2] = 1;                       // class version 1
            bad[2][3] = (byte) 0x81;             // a response method
            bad[3][17] = 0x7F;                   // an unknown attribute
            bad[4] = new byte[40];               // short
            System.arraycopy(ok, 0, bad[4], 0, 40);
            // bad[5]: a REQ for RDMA_PS_TCP without rdma_cm's header
            long before = CmEngine.INSTANCE.devices.agentCounters(devB.name(), 1)[0];
            for (byte[] b : bad) {
                faults().inject(gidB, gidA, b);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (CmEngine.INSTANCE.devices.agentCounters(devB.name(), 1)[0] - before < bad.length) {
                assertTrue(System.nanoTime() - deadline < 0, "not every malformed MAD was counted");
                Thread.sleep(1);
            }
            assertNull(sch.getEvent(0, TimeUnit.SECONDS), "no CONNECT_REQUEST from a malformed REQ");
            resolve(client, cch, ipB, port);
            client.connect(new ConnParam().qpNum(99));
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            req.id().reject(null);
            expect(cch, CmEventType.REJECTED);
            req.id().close();
        }
    }

    @Test
    void callsInTheWrongStateFailWithEinval() throws Exception {
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> id.connect(new ConnParam())).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> id.accept(new ConnParam())).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> id.resolveRoute(1)).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> id.disconnect()).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> id.reject(null)).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> new ConnParam().retryCount(8)).errno());
            id.resolveAddr(new InetSocketAddress(ipA, 0), new InetSocketAddress(ipB, 1), 10);
            expect(ch, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(10);
            expect(ch, CmEventType.ROUTE_RESOLVED);
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> id.connect(new ConnParam().qpNum(1).privateData(new byte[57]))).errno(), "56 bytes at most");
            assertEquals(Errno.EPROTONOSUPPORT, assertThrows(VerbsException.class,
                    () -> ch.createId(PortSpace.IB)).errno());
        }
    }
}

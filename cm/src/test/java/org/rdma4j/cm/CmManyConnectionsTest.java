// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Many connections at once, and nothing left in the tables afterwards (rxe's CM stops at about a thousand). */
class CmManyConnectionsTest extends CmTestSupport {
    private static final int N = 1500;

    @BeforeAll
    static void devices() {
        setUpDevices("cmm");
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    private static CmEvent next(CmEventChannel ch) throws InterruptedException {
        CmEvent e = ch.getEvent(WAIT_S, TimeUnit.SECONDS);
        assertNotNull(e, "an event is missing");
        e.ack();
        return e;
    }

    /**
     * The passive side's part of many disconnects, as a program must do it: every DISCONNECTED is
     * answered with disconnect (the DREP) until {@code n} have come. A connection answered early leaves
     * time wait (about 67 ms at the default ACK timeout, cm.c waits for its path's packet lifetime) while
     * later DREQs are still on their way, so its TIMEWAIT_EXIT can come before another connection's
     * DISCONNECTED: those are recorded in {@code seen}, not counted. Returns the events taken.
     */
    private static int answerDisconnects(CmEventChannel sch, int n, Map<CmId, List<CmEventType>> seen)
            throws InterruptedException {
        int taken = 0;
        for (int disconnected = 0; disconnected < n; taken++) {
            CmEvent e = next(sch);
            seen.computeIfAbsent(e.id(), k -> new ArrayList<>()).add(e.type());
            if (e.type() == CmEventType.DISCONNECTED) {
                disconnected++;
                e.id().disconnect();
            } else {
                assertEquals(CmEventType.TIMEWAIT_EXIT, e.type(), e::toString);
            }
        }
        return taken;
    }

    @Test
    void fifteenHundredConnectionsOpenAtOnceThenCloseAndLeaveNothingBehind() throws Exception {
        int port = port();
        if (!PROVIDER_GSI) {
            fabric.clearFaults();
        }
        List<CmId> clients = new ArrayList<>();
        List<CmId> accepted = new ArrayList<>();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP)) {
            // rdma_cm's default timeouts: the requests wait (MRAed) while this thread is still connecting
            listener.bindAddr(new java.net.InetSocketAddress(ipB, port));
            listener.listen(2 * N); // the default backlog (1024) would reject the last ones
            for (int i = 0; i < N; i++) {
                CmId c = cch.createId(PortSpace.TCP);
                clients.add(c);
                c.resolveAddr(new java.net.InetSocketAddress(ipA, 0), new java.net.InetSocketAddress(ipB, port), 1000);
                assertEquals(CmEventType.ADDR_RESOLVED, next(cch).type());
                c.resolveRoute(1000);
                assertEquals(CmEventType.ROUTE_RESOLVED, next(cch).type());
                c.connect(new ConnParam().qpNum(1 + i).privateData(new byte[] {(byte) i, (byte) (i >>> 8)}));
            }
            Set<Integer> seen = new HashSet<>();
            while (accepted.size() < N) {
                CmEvent e = next(sch);
                assertEquals(CmEventType.CONNECT_REQUEST, e.type(), e::toString);
                byte[] pd = e.privateData();
                assertTrue(seen.add(pd[0] & 0xFF | (pd[1] & 0xFF) << 8), "one request per connection");
                e.id().accept(new ConnParam().qpNum(100_000 + accepted.size()));
                accepted.add(e.id());
            }
            for (int i = 0; i < N; i++) { // the clients have no QPs: they establish themselves
                CmEvent e = next(cch);
                assertEquals(CmEventType.CONNECT_RESPONSE, e.type(), e::toString);
                e.id().establish();
            }
            for (int i = 0; i < N; i++) {
                CmEvent e = next(sch);
                assertEquals(CmEventType.ESTABLISHED, e.type(), e::toString);
            }
            assertEquals(N, new HashSet<>(clients.stream().map(CmId::localAddress).toList()).size(),
                    "every client has its own port");
            for (CmId c : clients) {
                c.disconnect();
            }
            Map<CmId, List<CmEventType>> seenEvents = new HashMap<>();
            // as with the kernel's CM, the passive side answers the DREQ itself
            int taken = answerDisconnects(sch, N, seenEvents);
            for (CmEventChannel ch : List.of(cch, sch)) {
                for (int i = 0; i < (ch == cch ? 2 * N : 2 * N - taken); i++) {
                    CmEvent e = next(ch);
                    seenEvents.computeIfAbsent(e.id(), k -> new ArrayList<>()).add(e.type());
                }
            }
            assertEquals(2 * N, seenEvents.size());
            for (List<CmEventType> l : seenEvents.values()) {
                assertEquals(List.of(CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT), l);
            }
            assertEquals(0, CmEngine.INSTANCE.connectionCount(), "no connection left in the tables");
        } finally { // also when an assertion failed: no id, agent or device context outlives this test
            clients.forEach(CmId::close);
            accepted.forEach(CmId::close);
        }
        awaitNoAgents();
    }

    @Test
    void aTimewaitExitBeforeAnotherConnectionsDisconnectedLeavesNoDreqUnanswered() throws Exception {
        int port = port();
        if (!PROVIDER_GSI) {
            fabric.clearFaults();
        }
        List<CmId> ids = new ArrayList<>();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP)) {
            listener.bindAddr(new java.net.InetSocketAddress(ipB, port));
            listener.listen(8);
            CmId[] client = new CmId[2];
            CmId[] child = new CmId[2];
            for (int i = 0; i < 2; i++) {
                client[i] = cch.createId(PortSpace.TCP);
                ids.add(client[i]);
                resolve(client[i], cch, ipB, port);
                client[i].connect(new ConnParam().qpNum(1 + i));
                child[i] = expect(sch, CmEventType.CONNECT_REQUEST).id();
                ids.add(child[i]);
                child[i].accept(new ConnParam().qpNum(100 + i));
                expect(cch, CmEventType.CONNECT_RESPONSE);
                client[i].establish();
                expect(sch, CmEventType.ESTABLISHED);
            }
            Map<CmId, List<CmEventType>> seen = new HashMap<>();
            client[0].disconnect();
            assertEquals(1, answerDisconnects(sch, 1, seen));
            expect(cch, CmEventType.DISCONNECTED);
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            // the first connection's time wait ends on the passive side too
            awaitQueued(sch, "TIMEWAIT_EXIT for the first connection");
            client[1].disconnect(); // its DISCONNECTED comes after the first connection's TIMEWAIT_EXIT
            int taken = answerDisconnects(sch, 1, seen);
            assertEquals(0, expect(cch, CmEventType.DISCONNECTED).status(), "the second DREQ was answered");
            assertEquals(2, taken, "the first connection's TIMEWAIT_EXIT, then the second's DISCONNECTED");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            seen.computeIfAbsent(expect(sch, CmEventType.TIMEWAIT_EXIT).id(), k -> new ArrayList<>())
                    .add(CmEventType.TIMEWAIT_EXIT);
            for (CmId c : child) {
                assertEquals(List.of(CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT), seen.get(c));
            }
        } finally {
            ids.forEach(CmId::close);
        }
        awaitNoAgents();
    }

    @Test
    void requestsToOnePeerGoOutOneWindowAtATimeAndTheRestFollowAsTheAnswersCome() throws Exception {
        FakeGsiFabric f = faults();
        int port = port();
        int n = CmAgent.WINDOW + 36;
        f.clearFaults();
        f.resetCounts();
        f.holdNext(org.rdma4j.cm.wire.MadHeader.ATTR_REQ, n); // nothing reaches B yet, so nothing is answered
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP)) {
            listener.bindAddr(new java.net.InetSocketAddress(ipB, port));
            listener.listen(2 * n);
            List<CmId> clients = new ArrayList<>();
            long deferredBefore = 0;
            for (int i = 0; i < n; i++) {
                CmId c = cch.createId(PortSpace.TCP);
                clients.add(c);
                c.setResponseTimeout(24); // 68 s: no retransmission while the test runs
                c.resolveAddr(new java.net.InetSocketAddress(ipA, 0), new java.net.InetSocketAddress(ipB, port), 1000);
                assertEquals(CmEventType.ADDR_RESOLVED, next(cch).type());
                c.resolveRoute(1000);
                assertEquals(CmEventType.ROUTE_RESOLVED, next(cch).type());
                if (i == 0) {
                    deferredBefore = CmEngine.INSTANCE.devices.agentCounters(devA.name(), 1)[3];
                }
                c.connect(new ConnParam().qpNum(1 + i));
            }
            assertEquals(CmAgent.WINDOW, f.sent(org.rdma4j.cm.wire.MadHeader.ATTR_REQ), "one window of REQs is out");
            assertEquals(n - CmAgent.WINDOW, CmEngine.INSTANCE.devices.agentCounters(devA.name(), 1)[3] - deferredBefore,
                    "the rest wait for a slot");
            f.clearFaults();
            f.releaseHeld(); // B takes the window and MRAs it: each MRA lets one waiting REQ go
            for (int i = 0; i < n; i++) {
                CmEvent e = next(sch);
                assertEquals(CmEventType.CONNECT_REQUEST, e.type(), e::toString);
                e.id().reject(null);
                e.id().close();
            }
            for (int i = 0; i < n; i++) {
                assertEquals(CmEventType.REJECTED, next(cch).type());
            }
            assertEquals(n, f.sent(org.rdma4j.cm.wire.MadHeader.ATTR_REQ), "every REQ went once, none was lost");
            clients.forEach(CmId::close);
        } finally {
            f.clearFaults();
        }
        awaitNoAgents();
    }
}

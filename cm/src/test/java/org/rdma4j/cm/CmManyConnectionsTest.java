// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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

    @Test
    void fifteenHundredConnectionsOpenAtOnceThenCloseAndLeaveNothingBehind() throws Exception {
        int port = port();
        if (!PROVIDER_GSI) {
            fabric.clearFaults();
        }
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP)) {
            // rdma_cm's default timeouts: the requests wait (MRAed) while this thread is still connecting
            listener.bindAddr(new java.net.InetSocketAddress(ipB, port));
            listener.listen(2 * N); // the default backlog (1024) would reject the last ones
            List<CmId> clients = new ArrayList<>();
            for (int i = 0; i < N; i++) {
                CmId c = cch.createId(PortSpace.TCP);
                clients.add(c);
                c.resolveAddr(new java.net.InetSocketAddress(ipA, 0), new java.net.InetSocketAddress(ipB, port), 1000);
                assertEquals(CmEventType.ADDR_RESOLVED, next(cch).type());
                c.resolveRoute(1000);
                assertEquals(CmEventType.ROUTE_RESOLVED, next(cch).type());
                c.connect(new ConnParam().qpNum(1 + i).privateData(new byte[] {(byte) i, (byte) (i >>> 8)}));
            }
            List<CmId> accepted = new ArrayList<>();
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
            java.util.Map<CmId, List<CmEventType>> seenEvents = new java.util.HashMap<>();
            for (int i = 0; i < N; i++) { // as with the kernel's CM, the passive side answers the DREQ itself
                CmEvent e = next(sch);
                seenEvents.computeIfAbsent(e.id(), k -> new ArrayList<>()).add(e.type());
                e.id().disconnect();
            }
            for (CmEventChannel ch : List.of(cch, sch)) {
                for (int i = 0; i < (ch == cch ? 2 * N : N); i++) {
                    CmEvent e = next(ch);
                    seenEvents.computeIfAbsent(e.id(), k -> new ArrayList<>()).add(e.type());
                }
            }
            assertEquals(2 * N, seenEvents.size());
            for (List<CmEventType> l : seenEvents.values()) {
                assertEquals(List.of(CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT), l);
            }
            assertEquals(0, CmEngine.INSTANCE.connectionCount(), "no connection left in the tables");
            clients.forEach(CmId::close);
            accepted.forEach(CmId::close);
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

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.SidrRep;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * The robustness list on real soft devices and their own QP1 (never the fake pair), in-process
 * and over UDP: every case ends in an event within the configured CM timeouts, never in a hang. Each
 * test makes its own pair of devices, since some remove one.
 */
class CmRobustnessTest extends CmTestSupport {
    private static int nextUdp = 27_000;

    /** A fresh pair of devices on {@code link}, with the engine on their real QP1s. */
    private static void pair(String link, String name) throws Exception {
        if (link.equals("udp")) {
            InetAddress a = InetAddress.getByName("127.0.0.71");
            InetAddress b = InetAddress.getByName("127.0.0.72");
            int udp = SoftDevices.freeUdpPort(nextUdp, a, b);
            nextUdp = udp + 1;
            setUpDevices("soft:udp?name=" + name + "A&addr=127.0.0.71&port=" + udp,
                    "soft:udp?name=" + name + "B&addr=127.0.0.72&port=" + udp);
        } else {
            setUpDevices(name);
        }
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
    }

    @AfterEach
    void removeDevices() throws InterruptedException {
        try {
            awaitNoAgents(); // a device with an open context cannot be removed
        } finally {
            tearDownDevices();
        }
    }

    /**
     * B vanishes: its port loses its carrier, so nothing of B reaches A or comes back, as a killed peer
     * looks from A. (Verbs.removeDevice refuses, EBUSY, while the CM holds a context on the device.)
     */
    private static void vanish(org.rdma4j.verbs.Device d) {
        SoftDevices.setPortState(d.name(), 1, false);
    }

    private static long counter(org.rdma4j.verbs.Device d, String name) {
        try (Context c = d.open()) {
            return c.counters(1).getOrDefault(name, -1L);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "udp"})
    void aPortWhereNoCmIdExistsRejectsARequestAtOnceWithReason8(String link) throws Exception {
        pair(link, "cmr1" + link.charAt(0));
        int port = port();
        try (CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.TCP)) {
            // B has no CM id at all, so no CM agent has its QP1 open: the cm module's responder answers
            client.setResponseTimeout(CmId.DEFAULT_RESPONSE_TIMEOUT); // a REJ, not the retries, must end it
            client.setMaxCmRetries(0);
            resolveKeepingTimeouts(client, cch, ipB, port);
            Ep ce = new Ep(client);
            ce.qp.postRecv(new RecvWorkRequest().wrId(9).sge(ce.mr, 0, 64));
            client.connect(new ConnParam());
            CmEvent rej = expect(cch, CmEventType.REJECTED);
            assertEquals(CmRej.REASON_INVALID_SERVICE_ID, rej.status());
            assertEquals(QpState.ERR, ce.qp.state());
            assertEquals(WcStatus.WR_FLUSH_ERR, ce.poll().status(), "the posted receive is flushed");
            assertEquals(1L, counter(devB, "gsi_unclaimed_answers"));
            ce.close();
        }
        try (CmEventChannel cch = new CmEventChannel(); CmId ud = cch.createId(PortSpace.UDP)) {
            ud.setMaxCmRetries(0);
            resolveKeepingTimeouts(ud, cch, ipB, port);
            ud.connect(new ConnParam().qpNum(77));
            CmEvent e = expect(cch, CmEventType.UNREACHABLE);
            assertEquals(SidrRep.STATUS_UNSUPPORTED, e.status(), "SIDR_REP: service id not supported");
        }
    }

    private static void resolveKeepingTimeouts(CmId id, CmEventChannel ch, InetAddress dst, int port)
            throws InterruptedException {
        id.resolveAddr(new InetSocketAddress(ipA, 0), new InetSocketAddress(dst, port), 2000);
        expect(ch, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(2000);
        expect(ch, CmEventType.ROUTE_RESOLVED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback"})
    void aRouteOverAPortThatIsDownEndsInRouteError(String link) throws Exception {
        pair(link, "cmr2" + link.charAt(0));
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.resolveAddr(new InetSocketAddress(ipA, 0), new InetSocketAddress(ipB, 1), 100);
            expect(ch, CmEventType.ADDR_RESOLVED);
            SoftDevices.setPortState(devA.name(), 1, false);
            try {
                id.resolveRoute(100);
                CmEvent e = expect(ch, CmEventType.ROUTE_ERROR);
                assertEquals(-Errno.ENODEV, e.status());
            } finally {
                SoftDevices.setPortState(devA.name(), 1, true);
            }
        }
    }

    /** Connects A to B with QPs on both sides; returns {client ep, server ep}. */
    private static Ep[] connected(CmEventChannel sch, CmEventChannel cch, CmId listener, CmId client)
            throws InterruptedException {
        int port = port();
        listen(listener, ipB, port, 8);
        resolve(client, cch, ipB, port);
        Ep ce = new Ep(client);
        client.connect(new ConnParam().retryCount(2));
        CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
        Ep se = new Ep(req.id());
        req.id().accept(new ConnParam());
        expect(cch, CmEventType.ESTABLISHED);
        expect(sch, CmEventType.ESTABLISHED);
        return new Ep[] {ce, se};
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "udp"})
    void aPeerThatVanishesAfterEstablishedEndsInTimeoutsAndFlushesEveryWr(String link) throws Exception {
        pair(link, "cmr3" + link.charAt(0));
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            client.setAckTimeout(10); // 4 ms per RC retry: the SEND gives up quickly
            Ep[] eps = connected(sch, cch, listener, client);
            Ep ce = eps[0];
            vanish(devB);
            ce.qp.postRecv(new RecvWorkRequest().wrId(1).sge(ce.mr, 0, 64));
            ce.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(ce.mr, 0, 8));
            java.util.Map<Long, WcStatus> done = new java.util.HashMap<>();
            for (int i = 0; i < 2; i++) {
                var wc = ce.poll();
                done.put(wc.wrId(), wc.status());
            }
            assertEquals(WcStatus.RETRY_EXC_ERR, done.get(2L), "the SEND to nobody times out");
            assertEquals(WcStatus.WR_FLUSH_ERR, done.get(1L), "the receive is flushed");
            client.disconnect();
            CmEvent d = expect(cch, CmEventType.DISCONNECTED);
            assertEquals(-Errno.ETIMEDOUT, d.status(), "the DREQ and its retries went unanswered");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            ce.close();
            eps[1].close();
            eps[1].id.close(); // established: its one DREQ is lost too; the id goes at once
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "udp"})
    void aPeerThatVanishesMidConnectionEndsInUnreachableAndFlushes(String link) throws Exception {
        pair(link, "cmr4" + link.charAt(0));
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            ce.qp.postRecv(new RecvWorkRequest().wrId(1).sge(ce.mr, 0, 64));
            client.connect(new ConnParam());
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id(); // B has it (and MRAed it); no answer comes
            vanish(devB);
            CmEvent e = expect(cch, CmEventType.UNREACHABLE);
            assertEquals(-Errno.ETIMEDOUT, e.status());
            assertEquals(QpState.ERR, ce.qp.state());
            assertEquals(WcStatus.WR_FLUSH_ERR, ce.poll().status(), "the receive is flushed");
            assertTrue(counter(devA, "gsi_overflow_drops") == 0);
            ce.close();
            child.close();
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Verbs;

/**
 * Every CM id gives back what it acquired on every path: after a connect that is rejected, one whose
 * peer never answers, a connection the peer rejects after it was up, or a disconnect whose ids are closed
 * in time wait, closing the program's objects lets both devices be removed at once (no EBUSY, no
 * waiting for a time wait to end), as rping removes the device it made when it exits.
 */
class CmIdReleaseTest extends CmTestSupport {
    private static final AtomicInteger ROUND = new AtomicInteger();
    private boolean removed;

    @BeforeEach
    void freshDevices() {
        setUpDevices("cmrel" + ROUND.incrementAndGet());
        removed = false;
    }

    @AfterEach
    void removeIfLeft() throws InterruptedException {
        if (!removed) {
            awaitNoAgents();
            tearDownDevices();
        }
    }

    /** Removes both devices now: fails with EBUSY if any id still holds a context. */
    private void removeAtOnce() {
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
        Verbs.removeDevice(devA);
        Verbs.removeDevice(devB);
        removed = true;
        assertEquals(0, CmEngine.INSTANCE.devices.agentCount(), "no CM agent left");
        assertEquals(0, CmEngine.INSTANCE.connectionCount(), "nothing left in the tables");
    }

    @Test
    void aRejectedConnectLeavesNoDeviceOpen() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel()) {
            CmId listener = sch.createId(PortSpace.TCP);
            CmId client = cch.createId(PortSpace.TCP);
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
            child.reject(null);
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, expect(cch, CmEventType.REJECTED).status());
            ce.close();
            client.close();
            child.close();
            listener.close();
        }
        removeAtOnce();
    }

    @Test
    void anUnreachablePeerLeavesNoDeviceOpen() throws Exception {
        faults().dropNext(MadHeader.ATTR_REQ, 1000); // nothing reaches the peer
        int port = port();
        try (CmEventChannel cch = new CmEventChannel()) {
            CmId client = cch.createId(PortSpace.TCP);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            assertEquals(-Errno.ETIMEDOUT, expect(cch, CmEventType.UNREACHABLE).status());
            ce.close();
            client.close();
        }
        removeAtOnce();
    }

    @Test
    void aConnectionThePeerRejectsAfterItWasUpLeavesNoDeviceOpen() throws Exception {
        faults().dropNext(MadHeader.ATTR_RTU, 1); // the client is up, the server still waits for the RTU
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel()) {
            CmId listener = sch.createId(PortSpace.TCP);
            CmId client = cch.createId(PortSpace.TCP);
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
            Ep se = new Ep(child);
            child.accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            se.close();
            child.close(); // REP_SENT: a REJ; the client, up, goes to time wait with REJECTED
            expect(cch, CmEventType.REJECTED);
            ce.close();
            client.close(); // in time wait
            listener.close();
        }
        removeAtOnce();
    }

    @Test
    void idsClosedInTimewaitAfterADisconnectLeaveNoDeviceOpen() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel()) {
            CmId listener = sch.createId(PortSpace.TCP);
            CmId client = cch.createId(PortSpace.TCP);
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
            Ep se = new Ep(child);
            child.accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            child.disconnect();
            expect(cch, CmEventType.DISCONNECTED);
            ce.close();
            se.close();
            client.close(); // both in time wait: nothing lingers
            child.close();
            listener.close();
        }
        removeAtOnce();
    }

    @Test
    void aRetransmittedReqThatCameAfterTheRejectGoesWithTheChannelItsRequestWaitsOn() throws Exception {
        // under load the client's REQ is sent again before the MRA reaches it; the copy arrives after the
        // program rejected the first, so it is a new request: its CONNECT_REQUEST is still queued when
        // the program closes the listener and the channel, and its id must go with them
        FakeGsiFabric f = faults();
        f.dropNext(MadHeader.ATTR_MRA, 1); // the client hears nothing and sends the REQ again
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel()) {
            CmId listener = sch.createId(PortSpace.TCP);
            CmId client = cch.createId(PortSpace.TCP);
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            f.resetCounts();
            client.connect(new ConnParam().qpNum(1));
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
            f.holdNext(MadHeader.ATTR_REQ, 1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (f.sent(MadHeader.ATTR_REQ) < 2) {
                assertTrue(System.nanoTime() - deadline < 0, "the client did not send its REQ again");
                Thread.sleep(1);
            }
            child.reject(null);
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, expect(cch, CmEventType.REJECTED).status());
            child.close();
            f.releaseHeld(); // the copy reaches B now: a request the program has not seen
            awaitQueued(sch, "CONNECT_REQUEST for the late copy");
            client.close();
            listener.close();
        }
        removeAtOnce();
    }

    @Test
    void aConnectRequestNotYetTakenGoesWithItsClosedChannel() throws Exception {
        int port = port();
        CmEventChannel sch = new CmEventChannel();
        try (CmEventChannel cch = new CmEventChannel()) {
            CmId listener = sch.createId(PortSpace.TCP);
            CmId client = cch.createId(PortSpace.TCP);
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            client.connect(new ConnParam().qpNum(1));
            awaitQueued(sch, "CONNECT_REQUEST");
            listener.close();
            sch.close(); // the request's id is rejected and destroyed with the event nobody can take now
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, expect(cch, CmEventType.REJECTED).status());
            client.close();
        }
        removeAtOnce();
    }

    @Test
    void aConnectRequestNotYetTakenGoesWithItsClosedListener() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel()) {
            CmId listener = sch.createId(PortSpace.TCP);
            CmId client = cch.createId(PortSpace.TCP);
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            client.connect(new ConnParam().qpNum(1));
            awaitQueued(sch, "CONNECT_REQUEST");
            listener.close(); // as ucma: the request's event goes, its id is rejected and destroyed
            assertEquals(0, sch.queued(), "the listener's request is no longer on its channel");
            assertEquals(CmRej.REASON_CONSUMER_DEFINED, expect(cch, CmEventType.REJECTED).status());
            client.close();
            assertEquals(0, CmEngine.INSTANCE.devices.agentCount(), "no CM agent left with the channel still open");
        }
        removeAtOnce();
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpState;

/**
 * Disconnecting as the kernel's CM does (cm.c cm_dreq_handler, cm_destroy_id; cma.c rdma_disconnect):
 * a DREQ gives the passive side DISCONNECTED at once and leaves its QP as it is; the DREP goes, and
 * the QP to ERROR, when that side calls disconnect or destroys its id. An active side whose peer never
 * answers gets DISCONNECTED with -ETIMEDOUT after its DREQ's retries.
 */
class CmPassiveDisconnectTest extends CmTestSupport {
    @BeforeAll
    static void devices() {
        setUpDevices("cmpd");
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        if (!PROVIDER_GSI) {
            fabric.clearFaults();
        }
        awaitNoAgents();
    }

    /** An established connection: the client (active) and the listener's child (passive), each with a QP. */
    private record Up(CmId child, Ep ce, Ep se) {
    }

    private static Up establish(CmEventChannel sch, CmEventChannel cch, CmId listener, CmId client)
            throws Exception {
        int port = port();
        listen(listener, ipB, port, 8);
        resolve(client, cch, ipB, port);
        Ep ce = new Ep(client);
        client.connect(new ConnParam());
        CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
        Ep se = new Ep(child);
        child.accept(new ConnParam());
        expect(cch, CmEventType.ESTABLISHED);
        expect(sch, CmEventType.ESTABLISHED);
        return new Up(child, ce, se);
    }

    @Test
    void aDreqGivesDisconnectedAndTheDrepWaitsForThePassiveSidesDisconnect() throws Exception {
        faults();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Up up = establish(sch, cch, listener, client);
            fabric.resetCounts();
            client.disconnect();
            assertEquals(0, expect(sch, CmEventType.DISCONNECTED).status());
            assertEquals(QpState.ERR, up.ce().qp.state(), "the side that disconnects moves its QP to ERROR");
            assertEquals(QpState.RTS, up.se().qp.state(), "the DREQ leaves the passive side's QP as it is");
            assertEquals(0, fabric.sent(MadHeader.ATTR_DREP), "no DREP before the passive side disconnects");
            assertNull(cch.getEvent(0, TimeUnit.SECONDS), "the active side waits for the DREP");
            up.child().disconnect();
            assertEquals(QpState.ERR, up.se().qp.state());
            assertEquals(1, fabric.sent(MadHeader.ATTR_DREP));
            assertEquals(0, expect(cch, CmEventType.DISCONNECTED).status(), "the DREP came");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            expect(sch, CmEventType.TIMEWAIT_EXIT);
            up.child().disconnect(); // nothing more to do: no error, no event
            assertNull(sch.getEvent(0, TimeUnit.SECONDS));
            up.ce().close();
            up.se().close();
            up.child().close();
        }
    }

    @Test
    void closingThePassiveIdAfterTheDreqSendsTheDrep() throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Up up = establish(sch, cch, listener, client);
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            up.child().close(); // rdma_destroy_id answers the DREQ too
            assertEquals(QpState.ERR, up.se().qp.state(), "destroying the id moves its QP to ERROR first");
            assertEquals(0, expect(cch, CmEventType.DISCONNECTED).status(), "the DREP came");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            up.ce().close();
            up.se().close();
        }
    }

    @Test
    void aPassiveSideThatNeverAnswersEndsTheActiveSidesDisconnectWithEtimedoutAfterItsRetries() throws Exception {
        faults();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Up up = establish(sch, cch, listener, client);
            fabric.resetCounts();
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED); // and the passive program does nothing
            CmEvent d = expect(cch, CmEventType.DISCONNECTED);
            assertEquals(-Errno.ETIMEDOUT, d.status(), "nobody answered the DREQ");
            assertEquals(1 + 3, fabric.sent(MadHeader.ATTR_DREQ), "the DREQ and its 3 retries, then no more");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            assertEquals(QpState.RTS, up.se().qp.state(), "still as it was: the passive program did nothing");
            up.child().disconnect(); // late: the DREP goes to an id that is gone and changes nothing there
            assertEquals(QpState.ERR, up.se().qp.state());
            expect(sch, CmEventType.TIMEWAIT_EXIT);
            up.ce().close();
            up.se().close();
            up.child().close();
        }
    }

    @Test
    void bothSidesDisconnectingAtOnceBothGetDisconnected() throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            Up up = establish(sch, cch, listener, client);
            client.disconnect();
            up.child().disconnect(); // before or after the client's DREQ came: either way both end
            expect(sch, CmEventType.DISCONNECTED);
            expect(cch, CmEventType.DISCONNECTED);
            expect(sch, CmEventType.TIMEWAIT_EXIT);
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            up.ce().close();
            up.se().close();
            up.child().close();
        }
    }
}

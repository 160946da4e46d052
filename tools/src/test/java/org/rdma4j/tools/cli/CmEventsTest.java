// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;

/** The CM tools' event step: one real event (ADDR_RESOLVED of an id on an in-process soft device). */
class CmEventsTest {
    private static Device device;
    private static InetSocketAddress address;

    @BeforeAll
    static void device() {
        device = Verbs.createDevice("soft:loopback?name=cmevents&fabric=cmevents");
        try (Context c = device.open()) {
            address = new InetSocketAddress(c.queryGid(1, 1).toInetAddress(), 7471);
        }
    }

    @AfterAll
    static void removeDevice() {
        Verbs.removeDevice(device);
    }

    /** The next event of {@code id}, a fresh id that resolves the device's own address, from the channel. */
    private static CmEvent addrResolved(CmEventChannel ch, CmId id) throws InterruptedException {
        id.resolveAddr(null, address, 2000);
        CmEvent e = ch.getEvent(10, TimeUnit.SECONDS);
        assertNotNull(e, "ADDR_RESOLVED of the device's own address");
        assertEquals(CmEventType.ADDR_RESOLVED, e.type());
        return e;
    }

    @Test
    void theHandlerGetsTheEventItsStatusIsReturnedAndTheEventIsAckedAfterIt() throws InterruptedException {
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            CmEvent e = addrResolved(ch, id);
            CmEvent[] seen = new CmEvent[1];
            int status = CmEvents.next((t, u) -> e, 1, TimeUnit.SECONDS, got -> {
                seen[0] = got;
                assertTrue(!got.isAcked(), "not acked before the handler is done with it");
                return 7;
            }, () -> -1);
            assertEquals(7, status);
            assertSame(e, seen[0]);
            assertTrue(e.isAcked());
            assertEquals(0, ch.unackedEvents());
        }
    }

    @Test
    void anEventIsAckedWhenItsHandlerThrows() throws InterruptedException {
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            CmEvent e = addrResolved(ch, id);
            assertThrows(IllegalStateException.class, () -> CmEvents.next((t, u) -> e, 1, TimeUnit.SECONDS, got -> {
                throw new IllegalStateException("the program's handler failed");
            }, () -> -1));
            assertTrue(e.isAcked());
            assertEquals(0, ch.unackedEvents());
        }
    }

    @Test
    void withoutAnEventTheProgramsNoneStatusIsReturnedAndTheHandlerIsNotCalled() throws InterruptedException {
        long[] asked = new long[1];
        int status = CmEvents.next((t, u) -> {
            asked[0] = u.toNanos(t);
            return null;
        }, 3, TimeUnit.SECONDS, got -> {
            throw new AssertionError("no event to handle");
        }, () -> -110);
        assertEquals(-110, status);
        assertEquals(TimeUnit.SECONDS.toNanos(3), asked[0], "the source is asked for the caller's timeout");
    }

    @Test
    void eventTypesAreNamedAsLibrdmacmNamesThem() {
        assertEquals("RDMA_CM_EVENT_ADDR_RESOLVED", CmEvents.name(CmEventType.ADDR_RESOLVED));
        assertEquals("RDMA_CM_EVENT_TIMEWAIT_EXIT", CmEvents.name(CmEventType.TIMEWAIT_EXIT));
    }
}

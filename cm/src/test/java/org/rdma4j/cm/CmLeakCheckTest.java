// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.rdma4j.verbs.Verbs;

/**
 * The tests' leak check: an id a test leaves open fails that test, and what it held is closed then, so
 * the tests after it in the JVM start with no CM agent and do not fail for it.
 */
class CmLeakCheckTest extends CmTestSupport {
    private static final AtomicInteger ROUND = new AtomicInteger();
    private boolean removed;

    @BeforeEach
    void freshDevices() {
        setUpDevices("cmleak" + ROUND.incrementAndGet());
        removed = false;
    }

    @AfterEach
    void removeIfLeft() throws InterruptedException {
        if (!removed) {
            awaitNoAgents();
            tearDownDevices();
        }
    }

    /** An id bound to device A (its agent open) that the test does not close. */
    private static CmId leak(CmEventChannel ch) throws InterruptedException {
        CmId id = ch.createId(PortSpace.TCP);
        resolve(id, ch, ipB, port());
        assertEquals(1, CmEngine.INSTANCE.devices.agentCount(), "the id holds A's agent");
        return id;
    }

    @Test
    void anIdLeftOpenFailsTheLeakCheckWhichClosesItSoTheNextTestStartsWithNoAgent() throws Exception {
        try (CmEventChannel ch = new CmEventChannel()) {
            CmId leaked = leak(ch);
            AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> awaitNoAgents(0));
            assertTrue(e.getMessage().contains(devA.name() + "/1 held by"), e.getMessage());
            assertTrue(leaked.isClosed(), "the leaked id was closed");
            assertEquals(0, CmEngine.INSTANCE.devices.agentCount(), "no agent for the next test");
            awaitNoAgents(0); // what the next test's check sees
        }
    }

    @Test
    void anIdLeftOpenAtTeardownFailsItThenTheDevicesAreRemovedWithNoAgentLeft() throws Exception {
        try (CmEventChannel ch = new CmEventChannel()) {
            CmId leaked = leak(ch);
            removed = true;
            AssertionFailedError e = assertThrows(AssertionFailedError.class, CmTestSupport::tearDownDevices);
            assertTrue(e.getMessage().contains(devA.name() + "/1 held by"), e.getMessage());
            assertTrue(leaked.isClosed(), "the leaked id was closed");
            assertEquals(0, CmEngine.INSTANCE.devices.agentCount(), "no agent for the next class");
            assertFalse(Verbs.devices().stream().anyMatch(d -> d.name().equals(devA.name())), "A was removed");
        }
    }
}

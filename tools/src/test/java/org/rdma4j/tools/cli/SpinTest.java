// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class SpinTest {
    @Test
    void aWaitIsStalledOnlyAfterTheLimitAndTheClockIsFirstReadAtTheCLOCK_EVERYthPoll() {
        Spin s = new Spin(0); // any measured wait is past the limit
        for (int i = 1; i <= Spin.CLOCK_EVERY; i++) {
            // the first clock read (poll CLOCK_EVERY) starts the wait: nothing has lasted yet
            assertFalse(s.idle(), "poll " + i);
        }
        boolean stalled = false;
        for (int i = 0; i < 1000 * Spin.CLOCK_EVERY && !stalled; i++) {
            stalled = s.idle();
            if (stalled) {
                assertEquals(0, s.polls() % Spin.CLOCK_EVERY, "decided at a clock read only");
            }
        }
        assertTrue(stalled, "a wait past a zero limit ends");
        s.begin();
        assertEquals(0, s.polls());
        assertFalse(s.idle(), "begin() starts a new wait");
    }

    @Test
    void aWaitWithinTheLimitGoesOn() {
        Spin s = new Spin(3_600_000_000_000L).begin();
        for (int i = 0; i < 20_000; i++) {
            assertFalse(s.idle());
        }
        assertEquals(20_000, s.polls());
    }
}

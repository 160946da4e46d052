// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RnrTimerTest {

    @Test
    void rnrCodesDecodeToTheIbtaDelays() {
        assertEquals(655_360_000L, RnrTimer.nanos(0), "code 0 is the longest, 655.36 ms");
        assertEquals(10_000L, RnrTimer.nanos(1));
        assertEquals(60_000L, RnrTimer.nanos(5));
        assertEquals(640_000L, RnrTimer.nanos(12), "ibv_rc_pingpong's min_rnr_timer 12 = 0.64 ms");
        assertEquals(10_240_000L, RnrTimer.nanos(20));
        assertEquals(491_520_000L, RnrTimer.nanos(31));
    }

    @Test
    void rnrDelaysGrowWithTheCodeFromOneUpward() {
        for (int code = 2; code < 32; code++) {
            assertTrue(RnrTimer.nanos(code) > RnrTimer.nanos(code - 1), "code " + code);
        }
        assertTrue(RnrTimer.nanos(0) > RnrTimer.nanos(31));
        assertEquals(RnrTimer.nanos(12), RnrTimer.nanos(32 + 12), "only the low 5 bits count");
    }

    @Test
    void ackTimeoutIs4096NanosTimesTwoToTheTimeoutAndZeroIsInfinite() {
        assertEquals(Long.MAX_VALUE, RnrTimer.ackTimeoutNanos(0));
        assertEquals(8_192L, RnrTimer.ackTimeoutNanos(1));
        assertEquals(67_108_864L, RnrTimer.ackTimeoutNanos(14), "ibv_rc_pingpong's timeout 14 = 67 ms");
        assertEquals(4096L << 31, RnrTimer.ackTimeoutNanos(31));
        assertEquals(7, RnrTimer.RNR_RETRY_INFINITE);
    }
}

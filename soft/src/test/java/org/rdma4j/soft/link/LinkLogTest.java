// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.CapturedLog;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.spi.LogRateLimit;

/** What the links tell an operator on {@code org.rdma4j.soft.link}: refused sends (ring fallbacks: ShmLinkLogTest). */
class LinkLogTest {
    @Test
    void refusedSendsLogOneWarningAMinuteNamingTheErrnoAndTheCount() {
        LinkLog.sendFailures = new LogRateLimit(TimeUnit.MINUTES.toNanos(1));
        try (CapturedLog log = new CapturedLog(LinkLog.CATEGORY, Level.INFO)) {
            for (int i = 0; i < 100; i++) {
                LinkLog.sendFailed("udp link 127.0.0.1:4791", Errno.EHOSTUNREACH);
            }
            List<String> warnings = log.at(Level.WARNING, "");
            assertEquals(1, warnings.size(), log.messages());
            assertTrue(warnings.get(0).contains("EHOSTUNREACH (the peer or its network is unreachable); 1 refused"),
                    warnings.get(0));
        } finally {
            LinkLog.sendFailures = new LogRateLimit(TimeUnit.MINUTES.toNanos(1));
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.spi.LogRateLimit;

/**
 * The links' {@code System.Logger} category, {@value #CATEGORY}: shared-memory ring fallbacks
 * (WARNING), UDP sends the kernel refused (a peer or network unreachable: WARNING, at most one line a
 * minute with the count), and the links' choices of send path (DEBUG). Thread safe.
 */
public final class LinkLog {
    /** The logger category of the soft device's links (UDP, shared memory). */
    public static final String CATEGORY = "org.rdma4j.soft.link";
    private static final Logger LOG = System.getLogger(CATEGORY);
    /** At most one line a minute about refused sends (a test may put a fresh one). */
    static volatile LogRateLimit sendFailures = new LogRateLimit(TimeUnit.MINUTES.toNanos(1));

    private LinkLog() {
    }

    /**
     * A datagram the kernel would not send ({@code errno}: EHOSTUNREACH, ENETUNREACH, ECONNREFUSED after
     * an ICMP port unreachable, ...): the packet is dropped and the transport's retries take over.
     * Allocation free while no line is due.
     */
    public static void sendFailed(String link, int errno) {
        if (!LOG.isLoggable(Level.WARNING)) {
            return;
        }
        long n = sendFailures.admit();
        if (n > 0) {
            String name = switch (errno) { // Linux numbers of the ones Errno has no name for
                case 101 -> "ENETUNREACH";
                case 111 -> "ECONNREFUSED";
                default -> Errno.name(errno);
            };
            String hint = errno == Errno.EHOSTUNREACH || errno == 101 || errno == 111
                    ? " (the peer or its network is unreachable)" : "";
            LOG.log(Level.WARNING, link + ": the kernel refused to send a datagram: " + name + hint + "; " + n
                    + " refused since the last report; the packets are dropped and RC retries them");
        }
    }
}

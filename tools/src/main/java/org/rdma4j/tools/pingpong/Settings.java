// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import org.rdma4j.verbs.Mtu;

/**
 * One run's parameters, validated.
 *
 * @param server the server to connect to, or null to be the server
 * @param gidIndex the local GID index, or -1 for none (then no GRH, as in the C tools)
 * @param numQp queue pairs (srq; 1 otherwise)
 * @param exchangeTimeoutMs how long the TCP exchange may take once connected
 * @param warmup exchanges at the start left out of the timing (rdma4j's --warmup; 0 in the C tools)
 * @param stallTimeoutMs how long the loop may go without a completion before it gives up (rdma4j's
 *     --stall-timeout; 0: for ever, as the C tools)
 */
record Settings(Transport transport, String server, int port, int ibPort, int size, Mtu mtu, int rxDepth,
                int iters, int sl, boolean events, int gidIndex, boolean validate, int numQp,
                int exchangeTimeoutMs, int warmup, long stallTimeoutMs) {
    boolean isClient() {
        return server != null;
    }
}

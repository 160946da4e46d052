package org.rdma4j.tools.pingpong;

import org.rdma4j.verbs.Mtu;

/**
 * One run's parameters, validated.
 *
 * @param server the server to connect to, or null to be the server
 * @param gidIndex the local GID index, or -1 for none (then no GRH, as in the C tools)
 * @param numQp queue pairs (srq; 1 otherwise)
 * @param exchangeTimeoutMs how long the TCP exchange may take once connected
 */
record Settings(Transport transport, String server, int port, int ibPort, int size, Mtu mtu, int rxDepth,
                int iters, int sl, boolean events, int gidIndex, boolean validate, int numQp,
                int exchangeTimeoutMs) {
    boolean isClient() {
        return server != null;
    }
}

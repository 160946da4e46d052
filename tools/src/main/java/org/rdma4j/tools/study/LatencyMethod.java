// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

/**
 * The ping-pongs of {@code rdma4j study latency} (seed 004, "RDMA fundamentals", exercise 3): a round
 * trip of {@code size} bytes over UDP sockets and over RDMA, each waited for by spinning or by
 * blocking. The first one, {@link #UDP_BUSY}, is the floor every row is compared with.
 */
enum LatencyMethod {
    UDP_BUSY("udp-busy", "UDP socket, busy-poll", false, false),
    UDP_BLOCK("udp-block", "UDP socket, blocking receive", false, true),
    SEND_BUSY("send-busy", "RDMA SEND/RECV, busy-poll", true, false),
    SEND_EVENTS("send-events", "RDMA SEND/RECV, completion events", true, true),
    WRITE_BUSY("write-busy", "RDMA WRITE, polling the buffer", true, false),
    WRITE_EVENTS("write-events", "RDMA WRITE with immediate, completion events", true, true);

    /** The name in the table and on --methods (no spaces: the table splits on whitespace). */
    final String id;
    /** The legend's words. */
    final String title;
    /** Through an RDMA QP (else a UDP socket). */
    final boolean rdma;
    /** Waits by blocking (a socket receive or a completion channel) rather than spinning. */
    final boolean blocking;

    LatencyMethod(String id, String title, boolean rdma, boolean blocking) {
        this.id = id;
        this.title = title;
        this.rdma = rdma;
        this.blocking = blocking;
    }

    /** The method called {@code id}, or null. */
    static LatencyMethod byId(String id) {
        for (LatencyMethod m : values()) {
            if (m.id.equals(id)) {
                return m;
            }
        }
        return null;
    }

    static String ids() {
        StringBuilder b = new StringBuilder();
        for (LatencyMethod m : values()) {
            b.append(b.isEmpty() ? "" : ", ").append(m.id);
        }
        return b.toString();
    }
}

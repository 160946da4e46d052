// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

/**
 * The four ping-pongs of "Introduction to RDMA Programming" (seed 003), with the figures it measured on
 * InfiniBand QDR 4x through a switch: round trip in µs, client and server user and kernel CPU in % of
 * the elapsed time.
 */
enum Variant {
    SEND_RECV_BUSY("send-recv-busy", "SEND/RECV, busy polling", false, 15.7, 100.0, 0.0, 100.0, 0.0),
    SEND_RECV_EVENTS("send-recv-events", "SEND/RECV, completion events", true, 21.1, 9.0, 9.1, 14.5, 6.5),
    WRITE_READ_EVENTS("write-read-events", "signaled WRITE + READ, events", true, 14.3, 26.4, 3.0, 0.0, 0.0),
    UNSIGNALED_WRITE_READ_EVENTS("unsig-write-read-events", "unsignaled WRITE + signaled READ, events", true,
            8.3, 28.0, 2.8, 0.0, 0.0);

    /** The name in the table (no spaces, so the table splits on whitespace). */
    final String id;
    final String title;
    /** Completions are waited for with a completion channel (else by spinning on poll). */
    final boolean events;
    final double seedRttUs;
    final double seedClientUser;
    final double seedClientKernel;
    final double seedServerUser;
    final double seedServerKernel;

    Variant(String id, String title, boolean events, double seedRttUs, double seedClientUser,
            double seedClientKernel, double seedServerUser, double seedServerKernel) {
        this.id = id;
        this.title = title;
        this.events = events;
        this.seedRttUs = seedRttUs;
        this.seedClientUser = seedClientUser;
        this.seedClientKernel = seedClientKernel;
        this.seedServerUser = seedServerUser;
        this.seedServerKernel = seedServerKernel;
    }

    boolean sendRecv() {
        return this == SEND_RECV_BUSY || this == SEND_RECV_EVENTS;
    }

    /** The seed's client CPU total as it prints it (9.0 + 9.1 is "18 %"). */
    double seedClientTotal() {
        return switch (this) {
            case SEND_RECV_BUSY -> 100.0;
            case SEND_RECV_EVENTS -> 18.0;
            case WRITE_READ_EVENTS -> 29.4;
            case UNSIGNALED_WRITE_READ_EVENTS -> 30.8;
        };
    }

    /** The seed's server CPU total ("21 %" for 14.5 + 6.5). */
    double seedServerTotal() {
        return seedServerUser + seedServerKernel;
    }
}

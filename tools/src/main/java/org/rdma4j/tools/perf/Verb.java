// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

/** The operation a perftest test measures, in perftest's order (its {@code VerbType}). */
enum Verb {
    SEND("Send"), WRITE("RDMA_Write"), READ("RDMA_Read"), ATOMIC("Atomic");

    private final String title;

    Verb(String title) {
        this.title = title;
    }

    /** The name in the banner's first line and the JSON "test" field. */
    String title() {
        return title;
    }

    /** READ and ATOMIC measure a full round trip per operation; WRITE and SEND a half (rtt_factor). */
    int rttFactor() {
        return this == READ || this == ATOMIC ? 1 : 2;
    }
}

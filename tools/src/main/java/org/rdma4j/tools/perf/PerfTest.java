// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

/** The eight perftest programs {@code rdma4j perf} runs: a verb and latency or bandwidth. */
enum PerfTest {
    WRITE_LAT(Verb.WRITE, false), WRITE_BW(Verb.WRITE, true), READ_LAT(Verb.READ, false),
    READ_BW(Verb.READ, true), SEND_LAT(Verb.SEND, false), SEND_BW(Verb.SEND, true),
    ATOMIC_LAT(Verb.ATOMIC, false), ATOMIC_BW(Verb.ATOMIC, true);

    private final Verb verb;
    private final boolean bw;

    PerfTest(Verb verb, boolean bw) {
        this.verb = verb;
        this.bw = bw;
    }

    Verb verb() {
        return verb;
    }

    /** A bandwidth test (perftest's tst == BW); otherwise a latency test. */
    boolean isBw() {
        return bw;
    }

    /** "write_lat", the subcommand name; the C program is "ib_" + this. */
    String command() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    static PerfTest of(String command) {
        return valueOf(command.toUpperCase(java.util.Locale.ROOT));
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.nio.file.Path;

/**
 * One side's settings, as perftest's {@code struct perftest_parameters} holds them after parsing and
 * its dependency rules ({@link PerfCommand} fills it; the run adjusts the device-dependent fields:
 * MTU, GID index, inline size, outstanding reads, cycle buffer). Mutable, one thread.
 */
final class PerfParams {
    // perftest's defaults (perftest_parameters.h)
    static final int DEF_PORT = 18515;
    static final int DEF_SIZE_BW = 65536;
    static final int DEF_SIZE_LAT = 2;
    static final int DEF_SIZE_ATOMIC = 8;
    static final int DEF_ITERS = 1000;
    static final int DEF_ITERS_WB = 5000;
    static final int DEF_TX_BW = 128;
    static final int DEF_TX_LAT = 1;
    static final int DEF_QP_TIME = 14;
    static final int DEF_RX_RDMA = 1;
    static final int DEF_RX_SEND = 512;
    static final int DEF_CQ_MOD = 100;
    static final int DEF_DURATION = 5;
    static final int DEF_INLINE_WRITE = 220;
    static final int DEF_INLINE_SEND_RC_UC = 236;
    static final int DEF_INLINE_SEND_UD = 188;
    static final int MAX_SIZE = 8388608;
    static final int MIN_ITER = 5;
    static final int MAX_ITER = 100000000;
    static final int MAX_INLINE = 912;
    static final int MAX_INLINE_UD = 884;
    static final int UC_MAX_RX = 16000;
    static final int MSG_SIZE_CQ_MOD_LIMIT = 8192;
    static final int QKEY = 0x11111111;
    static final int MIN_RNR_TIMER = 12;
    /** perftest's DEF_RETRY_COUNT: the retry count of -R's connections. */
    static final int DEF_RETRY_COUNT = 7;
    static final int UD_ADDITION = 40;
    static final long ATOMIC_ADD_VALUE = 1;
    static final long ATOMIC_SWAP_VALUE = 0;
    /** Peak bandwidth is not computed past this many iterations (perftest turns it off there). */
    static final int PEAK_ITERS_LIMIT = 20000;

    enum AtomicType { CMP_AND_SWAP, FETCH_AND_ADD }

    PerfTest test;
    Connection connection = Connection.RC;
    String host;
    /** The server side (no host); false for the client. */
    boolean server;
    int port = DEF_PORT;
    /** -R: the QPs (and the exchange) go through the connection manager. */
    boolean rdmaCm;
    /** -R: the address of this end (--bind), or null: the server listens on any address, the client's is routed. */
    java.net.InetAddress cmAddress;
    String ibDev;
    int ibPort = 1;
    long size;
    boolean sizeGiven;
    /** -a: every power of two from 2 to 2^23. */
    boolean all;
    int iters;
    /** -D seconds, 0 for an iteration run. */
    int duration;
    /** -f seconds; -1 until -D sets it to duration / 4. */
    int margin = -1;
    int txDepth;
    int rxDepth;
    int numQps = 1;
    int cqMod = DEF_CQ_MOD;
    /** -l: send work requests per post (one chained list, one doorbell); BW tests only. */
    int postList = 1;
    boolean cqModGiven;
    /** -I, or -1 for the test's default. */
    int inlineSize = -1;
    /** -o, or 0 for the device's maximum. */
    int outReads;
    AtomicType atomicType = AtomicType.FETCH_AND_ADD;
    /** -x, or -1 (then 0 on RoCE, and the best GID as perftest picks it). */
    int gidIndex = -1;
    boolean gidGiven;
    boolean ipv6;
    /** -m in bytes, or 0 for the port's active MTU. */
    int mtu;
    int sl;
    int qpTimeout = DEF_QP_TIME;
    boolean useEvent;
    boolean useSrq;
    boolean noPeak;
    /** -b. */
    boolean duplex;
    boolean gbits;
    boolean histogram;
    boolean unsorted;
    int exchangeTimeoutS = 120;
    /** --counters: the port's non-zero counters on stderr at the end. */
    boolean printCounters;
    Path json;
    Path plot;
    boolean progress;

    // perftest options set by PerftestOptions
    /** --report-both: the two directions of a -b run in tables of their own after the sum. */
    boolean reportBoth;
    /** --tclass: the GRH traffic class of the QPs' path (modify_qp to RTR). */
    int trafficClass;
    /** --cpu_util: the machine's CPU use over the -D sample window, after each result. */
    boolean cpuUtil;
    /** --output: only this number per result (no banner, no table); null for the full report. */
    PerftestOptions.Output output;
    /** --source_ip / -j: the address the TCP exchange (and -R's connection) uses on this side. */
    java.net.InetAddress sourceIp;
    /** --run_infinitely: -D rounds of {@link #duration} s, one result each, until stopped. */
    boolean runInfinitely;
    /** For tests: how many --run_infinitely rounds before stopping (as if interrupted). */
    long infiniteRounds = Long.MAX_VALUE;

    // Settled during the run (device and peer dependent).
    int cycleBuffer = 4096;
    int cacheLine = 64;
    /** The ibv_mtu enum value used (1..5). */
    int currMtu;

    boolean isBw() {
        return test.isBw();
    }

    Verb verb() {
        return test.verb();
    }

    boolean isClient() {
        return !server;
    }

    /** -D given. */
    boolean isDuration() {
        return duration > 0;
    }

    static long mtuBytes(int mtuEnum) {
        return 1L << (7 + mtuEnum);
    }

    /** perftest's BUFF_SIZE: messages under the cycle buffer share a cycle-buffer-sized area. */
    long buffSize() {
        return size < cycleBuffer ? cycleBuffer : size;
    }

    /** perftest's INC: how far successive messages are apart in the cycle buffer. */
    static long inc(long size, int cacheLine) {
        return size > cacheLine ? BwStats.roundUp(size, cacheLine) : cacheLine;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every test kind end to end in one process (--loopback: two embedded soft devices, perftest's TCP
 * exchange on 127.0.0.1), checking that the data really moved (the peer's memory, atomic results) and
 * that the printed table parses. Small -n: these check behaviour, they time nothing.
 */
@Timeout(120)
class LoopbackTest {
    static final Pattern LAT_LINE = Pattern.compile(
            "^ (\\d+)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s*$",
            Pattern.MULTILINE);
    static final Pattern BW_LINE = Pattern.compile(
            "^ (\\d+)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s*$", Pattern.MULTILINE);

    record Run(Loopback.Pair pair, String out, String err) {
        PerfResources server() {
            return pair.server.resources;
        }

        PerfResources client() {
            return pair.client.resources;
        }
    }

    static Run run(String test, String... args) {
        PerfParams p = PerfArgs.params(test, args);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Loopback.Pair pair = Loopback.Pair.run(p, new PrintWriter(out, true), new PrintWriter(err, true), true);
        Run r = new Run(pair, out.toString(), err.toString());
        assertEquals(0, pair.clientRc, () -> "client failed:\n" + r.out + r.err + "\nserver:\n" + pair.serverOut
                + pair.serverErr);
        assertEquals(0, pair.serverRc, () -> "server failed:\n" + pair.serverOut + pair.serverErr);
        return r;
    }

    static List<long[]> rows(Pattern p, String out) {
        List<long[]> rows = new ArrayList<>();
        Matcher m = p.matcher(out);
        while (m.find()) {
            rows.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
            for (int g = 3; g <= m.groupCount(); g++) {
                double v = Double.parseDouble(m.group(g));
                assertTrue(v >= 0 && Double.isFinite(v), m.group());
            }
        }
        return rows;
    }

    static void assertPattern(MemorySegment seg, long offset, long size) {
        assertPattern(seg, offset, size, 0);
    }

    /** {@code size} bytes at {@code offset} are the send pattern from {@code from} on. */
    static void assertPattern(MemorySegment seg, long offset, long size, long from) {
        for (long i = 0; i < size; i++) {
            assertEquals(PerfResources.pattern(from + i), seg.get(ValueLayout.JAVA_BYTE, offset + i), "byte " + i);
        }
    }

    static long recvOffset(PerfResources r, int qp) {
        return r.recvAddress(qp) - r.mr.address();
    }

    @Test
    void writeLatMovesTheLastByteBothWays() {
        Run r = run("write_lat", "-n", "50", "-s", "64");
        try {
            List<long[]> rows = rows(LAT_LINE, r.out);
            assertEquals(1, rows.size(), r.out);
            assertEquals(64, rows.get(0)[0]);
            assertEquals(50, rows.get(0)[1]);
            assertTrue(r.out.contains("RDMA_Write Latency Test"), r.out);
            // each side wrote its counter into the other's last byte; the first 63 bytes are the pattern
            for (PerfResources side : new PerfResources[] {r.server(), r.client()}) {
                assertEquals((byte) 50, side.buf.get(ValueLayout.JAVA_BYTE, recvOffset(side, 0) + 63));
                assertPattern(side.buf, recvOffset(side, 0), 63);
            }
        } finally {
            r.pair.close();
        }
    }

    @Test
    void theSoftDeviceIsUnknownToPerftestSoLatencyTestsDoNotInline() {
        // perftest does not recognise the soft device's vendor/part IDs (nor rxe's): no inline data
        for (String test : new String[] {"write_lat", "send_lat"}) {
            Run r = run(test, "-n", "20");
            try {
                assertTrue(r.out.contains(" Max inline data : 0[B]\n"), r.out);
                assertEquals(0, r.client().p.inlineSize);
                assertEquals(0, r.server().p.inlineSize);
                assertTrue(!r.err.contains("Device not recognized"), r.err);
            } finally {
                r.pair.close();
            }
        }
        Run r = run("write_lat", "-n", "20", "-I", "64");
        try {
            assertTrue(r.out.contains(" Max inline data : 0[B]\n"), r.out);
            assertTrue(r.err.contains("Device not recognized to implement inline feature. Disabling it"), r.err);
        } finally {
            r.pair.close();
        }
    }

    @Test
    void countersPrintsEachSidesNonZeroPortCountersAtTheEnd() {
        Run r = run("write_bw", "-n", "40", "-s", "4096", "--counters");
        try {
            List<String> lines = r.err.lines().filter(l -> l.startsWith("counters:")).toList();
            assertEquals(1, lines.size(), r.err); // the client's (the loopback prints the server's on failure only)
            assertTrue(lines.get(0).matches(".* sent_pkts=[1-9][0-9]*( .*)?"), r.err); // its 40 WRITEs
            assertTrue(lines.get(0).matches(".* rcvd_pkts=[1-9][0-9]*( .*)?"), r.err); // their ACKs
            assertTrue(lines.stream().noneMatch(l -> l.matches(".*=0( .*)?")), r.err);
        } finally {
            r.pair.close();
        }
        Run quiet = run("write_bw", "-n", "40", "-s", "4096");
        try {
            assertTrue(!quiet.err.contains("counters:"), quiet.err);
        } finally {
            quiet.pair.close();
        }
    }

    @Test
    void writeBwFillsTheServersBuffer() {
        Run r = run("write_bw", "-n", "40", "-s", "65536", "-q", "2");
        try {
            List<long[]> rows = rows(BW_LINE, r.out);
            assertEquals(List.of(65536L, 80L), List.of(rows.get(0)[0], rows.get(0)[1]), r.out);
            assertTrue(r.out.contains("RDMA_Write BW Test") && r.out.contains("Number of qps   : 2"), r.out);
            for (int q = 0; q < 2; q++) {
                assertPattern(r.server().buf, recvOffset(r.server(), q), 65536);
            }
        } finally {
            r.pair.close();
        }
    }

    @Test
    void writeBwOverUcWithSmallMessagesCyclesThroughTheServersBuffer() {
        Run r = run("write_bw", "-c", "UC", "-n", "200", "-s", "100");
        try {
            assertEquals(200, rows(BW_LINE, r.out).get(0)[1], r.out);
            // 100-byte messages go from every 128 bytes of the sender's 4096-byte cycle buffer to the same
            // place in the receiver's
            for (long slot = 0; slot < 4096 / 128; slot++) {
                assertPattern(r.server().buf, recvOffset(r.server(), 0) + slot * 128, 100, slot * 128);
            }
        } finally {
            r.pair.close();
        }
    }

    @Test
    void readLatReadsTheServersBuffer() {
        Run r = run("read_lat", "-n", "20", "-s", "512");
        try {
            assertEquals(1, rows(LAT_LINE, r.out).size(), r.out + r.err);
            assertTrue(r.out.contains("Outstand reads"), r.out);
            // the client's send area (the READ's destination) now holds the server's zeros
            MemorySegment c = r.client().buf;
            for (int i = 0; i < 512; i++) {
                assertEquals(0, c.get(ValueLayout.JAVA_BYTE, i));
            }
        } finally {
            r.pair.close();
        }
    }

    @Test
    void readBwReadsTheServersBuffer() {
        Run r = run("read_bw", "-n", "30", "-s", "16384");
        try {
            assertEquals(30, rows(BW_LINE, r.out).get(0)[1], r.out);
            MemorySegment c = r.client().buf;
            for (int i = 0; i < 16384; i++) {
                assertEquals(0, c.get(ValueLayout.JAVA_BYTE, i));
            }
            assertTrue(r.pair.serverOut.toString().contains(" 16384"), "the server prints the client's line");
        } finally {
            r.pair.close();
        }
    }

    @Test
    void sendLatDeliversIntoTheReceiveBuffer() {
        Run r = run("send_lat", "-n", "30", "-s", "300");
        try {
            assertEquals(30, rows(LAT_LINE, r.out).get(0)[1], r.out);
            for (PerfResources side : new PerfResources[] {r.server(), r.client()}) {
                assertPattern(side.buf, recvOffset(side, 0), 300);
            }
        } finally {
            r.pair.close();
        }
    }

    @Test
    void sendLatOverUdLeavesRoomForTheGrh() {
        Run r = run("send_lat", "-c", "UD", "-n", "30", "-s", "256");
        try {
            assertTrue(r.out.contains("Connection type : UD"), r.out);
            for (PerfResources side : new PerfResources[] {r.server(), r.client()}) {
                // the receive starts 40 bytes before the cache-line boundary: the payload lands on it
                assertPattern(side.buf, recvOffset(side, 0) + 64, 256);
            }
        } finally {
            r.pair.close();
        }
    }

    @Test
    void sendBwDeliversEveryMessageOverRcUcAndUd() {
        for (String c : new String[] {"RC", "UC", "UD"}) {
            Run r = run("send_bw", "-c", c, "-n", "64", "-s", c.equals("UD") ? "1024" : "2048");
            try {
                List<long[]> rows = rows(BW_LINE, r.out);
                assertEquals(64, rows.get(0)[1], c + "\n" + r.out);
                Matcher m = BW_LINE.matcher(r.out);
                assertTrue(m.find() && Double.parseDouble(m.group(3)) > 0, "the client reports a peak\n" + r.out);
                List<long[]> serverRows = rows(BW_LINE, r.pair.serverOut.toString());
                assertEquals(64, serverRows.get(0)[1], c + " server\n" + r.pair.serverOut);
                long off = recvOffset(r.server(), 0) + (c.equals("UD") ? 64 : 0);
                // UD: the next receive's GRH (40 bytes) lands on the tail of this one, as in perftest
                assertPattern(r.server().buf, off, c.equals("UD") ? 1024 - 40 : 2048);
            } finally {
                r.pair.close();
            }
        }
    }

    @Test
    void atomicLatFetchAndAddCountsEveryOperation() {
        Run r = run("atomic_lat", "-n", "25");
        try {
            assertTrue(r.out.contains("Atomic FETCH_AND_ADD Latency Test"), r.out);
            assertEquals(25, r.server().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, recvOffset(r.server(), 0)));
            // the last fetch returned the value before the last add
            assertEquals(24, r.client().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
        } finally {
            r.pair.close();
        }
    }

    @Test
    void atomicLatCompareAndSwapFetchesTheOldValue() {
        Run r = run("atomic_lat", "-A", "CMP_AND_SWAP", "-n", "10");
        try {
            assertTrue(r.out.contains("Atomic CMP_AND_SWAP Latency Test"), r.out);
            // compare 0, swap 0 on a zero word: it stays 0, and the fetched 0 replaced the pattern
            assertEquals(0, r.server().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, recvOffset(r.server(), 0)));
            assertEquals(0, r.client().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
        } finally {
            r.pair.close();
        }
    }

    @Test
    void atomicBwSpreadsTheAddsOverTheCycleBuffer() {
        Run r = run("atomic_bw", "-n", "640");
        try {
            assertEquals(640, rows(BW_LINE, r.out).get(0)[1], r.out);
            long sum = 0;
            for (long slot = 0; slot < 4096 / 64; slot++) {
                sum += r.server().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, recvOffset(r.server(), 0) + slot * 64);
            }
            assertEquals(640, sum);
        } finally {
            r.pair.close();
        }
    }

    /**
     * -l 16: each post is a list of 16 chained WRITEs whose addresses are fixed, as perftest's: the
     * first 16 of the 32 128-byte slots of the 4096-byte cycle buffer are written, the rest never; the
     * banner names the post list and the CQ moderation follows it.
     */
    @Test
    void writeBwWithAPostListWritesTheListsSlots() {
        Run r = run("write_bw", "-n", "320", "-s", "100", "-l", "16");
        try {
            assertEquals(320, rows(BW_LINE, r.out).get(0)[1], r.out);
            assertTrue(r.out.contains("RDMA_Write Post List BW Test") && r.out.contains("Post List       : 16")
                    && r.out.contains("CQ Moderation   : 16"), r.out);
            long base = recvOffset(r.server(), 0);
            for (long slot = 0; slot < 16; slot++) {
                assertPattern(r.server().buf, base + slot * 128, 100, slot * 128);
            }
            for (long slot = 16; slot < 32; slot++) {
                assertEquals(0, r.server().buf.get(ValueLayout.JAVA_BYTE, base + slot * 128), "slot " + slot);
            }
        } finally {
            r.pair.close();
        }
    }

    static final Pattern LAT_DURATION_LINE = Pattern.compile(
            "^ (\\d+)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s*$", Pattern.MULTILINE);

    /**
     * A -D run (-D 3 -f 1: one second of warm-up, one sampled, one more) counts what completed inside the
     * sampling window and divides by that window: iterations / rate gives back about one second, with
     * the post list too (the loops read the clock once per {@value Loops#CLOCK_READ_EVERY} calls).
     */
    @Test
    void aDurationRunReportsTheSampledSecond() {
        // bandwidth rows: iterations / (MsgRate in Mpps); -D latency rows: iterations / tps average
        assertSampledSecond(BW_LINE, 5, 1e6, "write_bw", "-s", "8", "-D", "3", "-f", "1");
        assertSampledSecond(BW_LINE, 5, 1e6, "write_bw", "-s", "8", "-D", "3", "-f", "1", "-l", "16");
        assertSampledSecond(LAT_DURATION_LINE, 4, 1, "write_lat", "-D", "3", "-f", "1");
    }

    /**
     * Runs {@code test args} in one process: its row's iterations over its rate (group {@code rateGroup}
     * of {@code row}, times {@code unit}) must come to about one second.
     */
    private static void assertSampledSecond(Pattern row, int rateGroup, double unit, String test, String... args) {
        Run r = run(test, args);
        try {
            Matcher m = row.matcher(r.out);
            assertTrue(m.find(), r.out);
            long iters = Long.parseLong(m.group(2));
            // a few dozen suffice for the window's arithmetic; a host busy with a VM ran 95 round trips in it
            assertTrue(iters > 10, r.out);
            double windowS = iters / (Double.parseDouble(m.group(rateGroup)) * unit);
            assertTrue(windowS > 0.9 && windowS < 1.2, "sampled window " + windowS + " s\n" + r.out);
        } finally {
            r.pair.close();
        }
    }

    @Test
    void writeBwBidirectionalReportsTheSum() {
        Run r = run("write_bw", "-b", "-n", "20", "-s", "4096");
        try {
            assertTrue(r.out.contains("RDMA_Write Bidirectional BW Test"), r.out);
            assertEquals(20, rows(BW_LINE, r.out).get(0)[1], r.out);
            assertPattern(r.server().buf, recvOffset(r.server(), 0), 4096);
            assertPattern(r.client().buf, recvOffset(r.client(), 0), 4096);
        } finally {
            r.pair.close();
        }
    }

    /**
     * The measured loops allocate nothing per operation: the client thread's allocation counter over
     * the loops (the inline soft device included) grows by less than 8 bytes per operation from a
     * 12000-operation run to a 42000-operation one, where one object per operation (16 bytes at least)
     * would add 480 KB. Not zero per run: each run makes new devices, whose packet pools grow to their
     * high-water mark once (about 1.2 KB of heap per packet; the packets in flight plus the per-thread
     * caches, see PacketPool), at a point of the run that depends on the threads' timing: 3 to 80 KB was
     * seen. Each size runs twice and the smaller figure counts, so one run's pool growth does not decide.
     */
    @Test
    void theMeasuredLoopsDoNotAllocate() {
        String[][] runs = {{"write_lat"}, {"send_lat"}, {"read_lat"}, {"atomic_lat"}, {"write_bw", "-s", "64"},
            {"send_bw", "-s", "64"}, {"send_bw", "-s", "64", "-b"}, {"atomic_bw"}, {"write_bw", "-s", "64", "-l", "8"}};
        StringBuilder report = new StringBuilder();
        boolean ok = true;
        for (String[] run : runs) {
            long[] bytes = {Long.MAX_VALUE, Long.MAX_VALUE};
            long[] ops = new long[2];
            for (int repeat = 0; repeat < 2; repeat++) {
                int k = 0;
                for (String n : new String[] {"12000", "42000"}) {
                    String[] args = java.util.Arrays.copyOf(java.util.Arrays.copyOfRange(run, 1, run.length + 2),
                            run.length + 1);
                    args[run.length - 1] = "-n";
                    args[run.length] = n;
                    Run r = run(run[0], args);
                    try {
                        bytes[k] = Math.min(bytes[k], r.pair.client.loopAllocatedBytes);
                        ops[k] = r.pair.client.loopOps;
                    } finally {
                        r.pair.close();
                    }
                    k++;
                }
            }
            long extraOps = ops[1] - ops[0];
            double perOp = (bytes[1] - bytes[0]) / (double) extraOps;
            report.append(String.join(" ", run)).append(": ").append(bytes[0]).append(" B in ").append(ops[0])
                    .append(" ops, ").append(bytes[1]).append(" B in ").append(ops[1]).append(" ops: ")
                    .append(String.format(java.util.Locale.ROOT, "%.3f", perOp)).append(" B/op\n");
            ok &= extraOps > 0 && bytes[1] - bytes[0] < 8 * extraOps;
        }
        System.out.print(report);
        assertTrue(ok, report.toString());
    }

    @Test
    void allSizesRunsTwoToTwoToTheTwentyThree() {
        Run r = run("write_bw", "-a", "-n", "5");
        try {
            List<long[]> rows = rows(BW_LINE, r.out);
            assertEquals(23, rows.size(), r.out);
            assertEquals(2, rows.get(0)[0]);
            assertEquals(1L << 23, rows.get(22)[0]);
        } finally {
            r.pair.close();
        }
    }
}

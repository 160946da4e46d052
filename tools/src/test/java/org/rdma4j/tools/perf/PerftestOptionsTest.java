// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** perftest's --report-both, --tclass, --cpu_util, --output, --source_ip and --run_infinitely. */
class PerftestOptionsTest {
    private static final Pattern NUMBER_LINE = Pattern.compile("^\\d+\\.\\d{6}$");

    /** Runs the loopback; the client's output. */
    private static String run(PerfParams p) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Loopback.Pair pair = Loopback.Pair.run(p, new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, pair.clientRc, () -> out + "\n" + err + "\nserver:\n" + pair.serverOut + pair.serverErr);
        return out.toString();
    }

    @Test
    void outputBandwidthPrintsTheAverageAloneAsPerftestsPercentLf() {
        PerfParams p = PerfArgs.params("write_bw", "-n", "500", "--output", "bandwidth");
        String out = run(p);
        List<String> lines = out.lines().toList();
        assertEquals(1, lines.size(), out);
        assertTrue(NUMBER_LINE.matcher(lines.getFirst()).matches(), out);
        assertFalse(out.contains("RDMA_Write BW Test"), "no banner: " + out);
    }

    @Test
    void outputLatencyPrintsTheAverageLatency() {
        PerfParams p = PerfArgs.params("write_lat", "-n", "100", "--output", "latency");
        StringWriter out = new StringWriter();
        Loopback.Pair pair = Loopback.Pair.run(p, new PrintWriter(out, true), new PrintWriter(new StringWriter()));
        assertEquals(0, pair.clientRc);
        List<String> lines = out.toString().lines().toList();
        assertEquals(List.of(Tables.fixed(pair.client.latResults.getFirst().tAvg, 6)), lines);
    }

    @Test
    void reportBothPrintsEachDirectionAfterTheSum() {
        String out = run(PerfArgs.params("write_bw", "-b", "-n", "500", "--report-both"));
        List<long[]> rows = LoopbackTest.rows(LoopbackTest.BW_LINE, out);
        assertEquals(3, rows.size(), out);
        assertTrue(out.indexOf(" Local results: ") < out.indexOf(" Remote results: "), out);
        Matcher m = LoopbackTest.BW_LINE.matcher(out);
        double[] avg = new double[3];
        for (int i = 0; i < 3; i++) {
            assertTrue(m.find());
            avg[i] = Double.parseDouble(m.group(4));
        }
        assertEquals(avg[0], avg[1] + avg[2], 0.011, "the sum first, then local and remote: " + out);
    }

    @Test
    void tclassSetsTheTrafficClassOfThePath() {
        PerfParams p = PerfArgs.params("write_bw", "-n", "100", "--tclass", "96");
        Loopback.Pair pair = Loopback.Pair.run(p, new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()), true);
        try {
            assertEquals(0, pair.clientRc);
            for (PerfRun side : new PerfRun[] {pair.client, pair.server}) {
                var grh = side.resources.qps[0].query().ahAttr.grh();
                assertEquals(96, grh.trafficClass());
            }
        } finally {
            pair.close();
        }
    }

    @Test
    void cpuUtilAddsAColumnToADurationRun() {
        String out = run(PerfArgs.params("write_bw", "-s", "8", "-D", "2", "-f", "0", "--cpu_util"));
        assertTrue(out.contains("MsgRate[Mpps]    CPU_Util[%]\n"), out);
        Matcher m = Pattern.compile("^ 8 .*\t    ([\\d.]+)\\s*$", Pattern.MULTILINE).matcher(out);
        assertTrue(m.find(), out);
        double cpu = Double.parseDouble(m.group(1));
        assertTrue(cpu >= 0 && cpu <= 100, out);
    }

    @Test
    void cpuUtilIsUserOverUserAndIdleOfProcStat() {
        long[] a = CpuUtil.parse("cpu  100 5 50 1000 7 0 3 0 0 0");
        long[] b = CpuUtil.parse("cpu  130 9 90 1090 7 0 3 0 0 0");
        assertEquals(100, a[0]);
        assertEquals(1000, a[1]);
        assertEquals(25.0, CpuUtil.percent(a, b), 1e-4, "30 user / (30 + 90)");
        assertEquals(0.0, CpuUtil.percent(a, a));
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"write_bw", "read_bw"})
    void runInfinitelyPrintsOneLinePerRoundUntilStopped(String test) {
        PerfParams p = PerfArgs.params(test, "-s", "64", "-D", "1", "--run_infinitely");
        assertTrue(p.isDuration());
        assertEquals(0, p.margin);
        assertTrue(p.noPeak);
        p.infiniteRounds = 3; // as if interrupted after the third
        String out = run(p);
        List<long[]> rows = LoopbackTest.rows(LoopbackTest.BW_LINE, out);
        assertEquals(3, rows.size(), out);
        for (long[] r : rows) {
            assertTrue(r[1] > 0, out);
        }
    }

    @Test
    void sendBwRunInfinitelyKeepsTheReceivesPostedAcrossRounds() {
        PerfParams p = PerfArgs.params("send_bw", "-s", "64", "-D", "1", "--run_infinitely");
        p.infiniteRounds = 3; // as if interrupted after the third
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Loopback.Pair pair = Loopback.Pair.run(p, new PrintWriter(out, true), new PrintWriter(err, true));
        String all = out + "\n" + err + "\nserver:\n" + pair.serverOut + pair.serverErr;
        assertEquals(0, pair.clientRc, all);
        assertEquals(0, pair.serverRc, all);
        List<long[]> rows = LoopbackTest.rows(LoopbackTest.BW_LINE, out.toString());
        assertEquals(3, rows.size(), all);
        for (long[] r : rows) {
            assertTrue(r[1] > 0, all);
        }
        assertTrue(LoopbackTest.rows(LoopbackTest.BW_LINE, pair.serverOut.toString()).isEmpty(), "the receiver prints no rounds");
    }

    @Test
    void sourceIpBindsTheClientsExchangeConnection() throws Exception {
        InetAddress source = InetAddress.getByName("127.0.0.57");
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Comm c = Comm.connect(source, "127.0.0.1", ss.getLocalPort(), 5000);
            try (Socket s = ss.accept()) {
                assertEquals(source, s.getInetAddress());
            } finally {
                c.close();
            }
        }
        assertEquals(source, PerfArgs.params("write_bw", "--server", "-j", "127.0.0.57").sourceIp);
        assertNull(PerfArgs.params("write_bw", "--server").sourceIp);
        PerfParams cm = PerfArgs.params("write_bw", "-R", "--source_ip", "127.0.0.57", "127.0.0.1");
        assertEquals(source, cm.cmAddress, "-R: the connection manager's source too");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "write_lat|--run_infinitely|run_infinitely exists only in BW tests for now.",
        "write_bw|--run_infinitely -e|Events feature not available on WRITE verb",
        "send_bw|--run_infinitely -e|run_infinitely does not support events feature yet.",
        "write_bw|--run_infinitely -a|run_infinitely runs one message size",
        "send_bw|--run_infinitely -b|run_infinitely mode is not supported in SEND",
        "write_bw|--report-both|it needs a BW test with -b",
        "write_lat|--output bandwidth|Output verbosity level for LAT can be: latency",
        "write_bw|--output latency|Output verbosity level for BW can be: bandwidth, message_rate",
        "write_bw|--output loud|Invalid verbosity level output flag",
        "write_bw|--tclass 256|the GRH traffic class is 0..255",
        "write_bw|-R --tclass 8 127.0.0.1|with -R the connection manager sets the path",
    })
    void perftestsRefusals(String test, String args, String message) {
        java.util.List<String> a = new java.util.ArrayList<>(List.of("perf", test));
        a.addAll(List.of(args.split(" ")));
        PerfCommandTest.Result r = PerfCommandTest.exec(a.toArray(String[]::new));
        assertEquals(1, r.code(), r.toString());
        assertTrue(r.err().contains(message), r.toString());
    }
}

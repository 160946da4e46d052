// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;

/** send_bw -b (perftest's run_iter_bi over RC): both sides send and receive, each prints the sum. */
class SendBwBidirectionalTest {
    private static Loopback.Pair run(StringWriter out, String... args) {
        PerfParams p = PerfArgs.params("send_bw", args);
        StringWriter err = new StringWriter();
        Loopback.Pair pair = Loopback.Pair.run(p, new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, pair.clientRc, () -> out + "\n" + err + "\nserver:\n" + pair.serverOut + pair.serverErr);
        assertEquals(0, pair.serverRc, () -> "server:\n" + pair.serverOut + pair.serverErr);
        return pair;
    }

    @Test
    void bothSidesSendEveryMessageAndReportTheSum() {
        StringWriter out = new StringWriter();
        Loopback.Pair pair = run(out, "-b", "-n", "2000", "-s", "4096", "--report-both");
        String o = out.toString();
        List<long[]> rows = LoopbackTest.rows(LoopbackTest.BW_LINE, o);
        assertEquals(3, rows.size(), o);
        assertEquals(2000, rows.get(1)[1], o);
        assertEquals(2000, rows.get(2)[1], "the server sent as many: " + o);
        Matcher m = LoopbackTest.BW_LINE.matcher(o);
        double[] avg = new double[3];
        for (int i = 0; i < 3; i++) {
            assertTrue(m.find());
            avg[i] = Double.parseDouble(m.group(4));
        }
        assertEquals(avg[0], avg[1] + avg[2], 0.011, o);
        assertTrue(avg[2] > 0, o);
        assertEquals(1, pair.server.bwResults.size());
        assertEquals(pair.client.bwResults.getFirst().bwAvg(), pair.server.bwResults.getFirst().bwAvg(), 1e-9,
                "both sides print the same sum");
    }

    @Test
    void aDurationRunCountsWhatArrivedInTheWindow() {
        StringWriter out = new StringWriter();
        run(out, "-b", "-s", "64", "-D", "2", "-f", "0");
        List<long[]> rows = LoopbackTest.rows(LoopbackTest.BW_LINE, out.toString());
        assertEquals(1, rows.size(), out.toString());
        assertTrue(rows.get(0)[1] > 100, out.toString());
    }

    @Test
    void udIsRefused() {
        PerfCommandTest.Result r = PerfCommandTest.exec("perf", "send_bw", "-b", "-c", "UD");
        assertEquals(1, r.code(), r.toString());
        assertTrue(r.err().contains("send_bw -b runs over RC"), r.toString());
    }
}

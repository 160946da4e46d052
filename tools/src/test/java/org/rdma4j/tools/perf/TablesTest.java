// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Gid;

/** Result lines and the banner against perftest's printf formats, expanded by hand. */
class TablesTest {
    @Test
    void bandwidthLineIsReportFmt() {
        // " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf" "\n"
        String line = Tables.bwLine(new BwReport(1024, 4, 4882.8125, 3906.25, 4.0), false);
        assertEquals(" 1024       4                4882.81            3906.25\t\t   4.000000\n", line);
    }

    @Test
    void smallGbitsAverageSwitchesToReportFmtExt() {
        // " %-7lu    %lu           %-7.6lf            %-7.6lf            %-7.6lf"
        String line = Tables.bwLine(new BwReport(2, 1000, 0.5, 0.0625, 3.9), true);
        assertEquals(" 2          1000           0.500000            0.062500            3.900000\n", line);
    }

    @Test
    void latencyLineIsReportFmtLat() {
        long[] t = {0, 2000, 6000, 7000, 11000, 13000, 23000};
        String line = Tables.latLine(LatencyStats.of(2, 7, t, 2));
        // t_avg 1.125 prints as C does, 1.12 (half-even on the exact value)
        String expected = " " + "2      " + " " + "7" + "          " + "0.50   " + "        " + "2.00   " + "      "
                + "1.00   " + "  \t       " + "1.12   " + "     \t" + "0.00   " + "\t\t" + "2.00   " + " \t\t" + "2.00   "
                + "\n";
        assertEquals(expected, line);
    }

    @Test
    void percentGAsC() {
        assertEquals("0.5", Tables.g(0.5));
        assertEquals("1.12346", Tables.g(1.123456));
        assertEquals("123457", Tables.g(123456.7));
        assertEquals("1.23457e+06", Tables.g(1234567));
        assertEquals("1e-05", Tables.g(0.00001));
        assertEquals("0.0001", Tables.g(0.0001));
        assertEquals("12", Tables.g(12.0));
    }

    @Test
    void fixedRoundsTheExactValueHalfEven() {
        assertEquals("1.12", Tables.fixed(1.125, 2));
        assertEquals("1.13", Tables.fixed(1.1251, 2));
        assertEquals("0.10", Tables.fixed(0.1, 2));
        assertEquals("-nan   ", Tables.f(Double.NaN, -7, 2));
        assertEquals("inf    ", Tables.f(Double.POSITIVE_INFINITY, -7, 2));
    }

    @Test
    void addressLinesAsCtxPrintPingpongData() {
        PerfDest d = new PerfDest(0, 16, 0x11, 0x123, 0x203d, 0x7f1234567000L, Gid.parse("::ffff:192.168.1.1"), 0);
        // BASIC_ADDR_FMT " %s address: LID %#04x QPN %#06x PSN %#06x", RDMA_FMT " RKey %#08x VAddr %#016llx"
        assertEquals(" local address: LID 0000 QPN 0x0011 PSN 0x0123 RKey 0x00203d VAddr 0x007f1234567000\n"
                + " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:01\n",
                Banner.address("local", d, Verb.WRITE, true));
        // READ adds " OUT %#04x" first; ATOMIC and SEND print neither
        assertEquals(" remote address: LID 0000 QPN 0x0011 PSN 0x0123 OUT 0x10 RKey 0x00203d VAddr 0x007f1234567000\n",
                Banner.address("remote", d, Verb.READ, false));
        assertEquals(" local address: LID 0000 QPN 0x0011 PSN 0x0123\n", Banner.address("local", d, Verb.ATOMIC, false));
    }
}

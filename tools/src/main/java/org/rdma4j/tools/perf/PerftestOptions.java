// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.net.InetAddress;
import java.util.function.Function;
import org.rdma4j.tools.cli.CNumber;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * perftest options beyond the core set, with perftest's meaning and refusals (perftest_parameters.c):
 * {@code --report-both}, {@code --tclass}, {@code --cpu_util}, {@code --output}, {@code --source_ip}
 * ({@code -j}), {@code --run_infinitely}; plus rdma4j's {@code --no-progress}. A picocli mixin of
 * every perf test; {@link #apply} checks them against the test and the settings {@link PerfCommand}
 * made, then sets them.
 */
final class PerftestOptions {
    /** perftest's --output verbosity levels: only this number per result. */
    enum Output {
        BANDWIDTH("bandwidth"), MESSAGE_RATE("message_rate"), LATENCY("latency");

        final String word;

        Output(String word) {
            this.word = word;
        }
    }

    @Option(names = "--report-both", order = 33,
            description = "Report RX & TX results separately on Bidirectional BW tests (after their sum)")
    boolean reportBoth;

    @Option(names = "--tclass", order = 34, paramLabel = "<value>", converter = CNumber.class,
            description = "Set the Traffic Class in GRH (if GRH is in use)")
    Integer tclass;

    @Option(names = "--cpu_util", order = 35,
            description = "Show CPU Utilization in report, valid only in Duration mode")
    boolean cpuUtil;

    @Option(names = "--output", order = 36, paramLabel = "<units>",
            description = "Set verbosity output level: bandwidth , message_rate, latency (only that number is "
                    + "printed, one line per size)")
    String output;

    @Option(names = {"-j", "--source_ip"}, order = 37, paramLabel = "<ip>",
            description = "Source ip address of this side's exchange connection (the client binds to it, the "
                    + "server listens on it; with -R the connection manager's source)")
    InetAddress sourceIp;

    @Option(names = "--run_infinitely", order = 38,
            description = "Run test forever, print results every <duration> seconds (-D, default 5); BW tests, not send_bw -b")
    boolean runInfinitely;

    @Option(names = "--no-progress", order = 45,
            description = "rdma4j: no progress bar on stderr (it appears on a terminal for runs over 2 s)")
    boolean noProgress;

    /**
     * Checks and sets the options on {@code p}, whose other settings are made; before force_dependecies'
     * duration rules, as perftest's run_infinitely makes the test a duration test.
     *
     * @param usage makes the usage error for a message
     */
    void apply(PerfParams p, Function<String, ParameterException> usage) {
        p.progress = !noProgress;
        if (reportBoth) {
            if (!p.isBw() || !p.duplex) {
                throw usage.apply(" --report-both reports the two directions of a bidirectional BW test "
                        + "separately: it needs a BW test with -b");
            }
            p.reportBoth = true;
        }
        if (tclass != null) {
            if (tclass < 0 || tclass > 255) {
                throw usage.apply(" --tclass " + tclass + ": the GRH traffic class is 0..255");
            }
            if (p.rdmaCm) {
                throw usage.apply(" --tclass sets the traffic class of QPs connected with modify_qp: with -R the "
                        + "connection manager sets the path");
            }
            p.trafficClass = tclass;
        }
        if (output != null) {
            Output o = null;
            for (Output v : Output.values()) {
                if (v.word.equals(output)) {
                    o = v;
                }
            }
            if (o == null) {
                throw usage.apply(" Invalid verbosity level output flag. Please use bandwidth, latency, message_rate");
            }
            if (p.isBw() && o == Output.LATENCY) {
                throw usage.apply(" Output verbosity level for BW can be: bandwidth, message_rate");
            }
            if (!p.isBw() && o != Output.LATENCY) {
                throw usage.apply(" Output verbosity level for LAT can be: latency");
            }
            p.output = o;
            p.progress = false; // the numbers alone
        }
        p.sourceIp = sourceIp;
        if (sourceIp != null && p.rdmaCm && p.cmAddress == null) {
            p.cmAddress = sourceIp;
        }
        if (runInfinitely) {
            if (p.useEvent) {
                throw usage.apply(" run_infinitely does not support events feature yet.");
            }
            if (!p.isBw()) {
                throw usage.apply(" run_infinitely exists only in BW tests for now.");
            }
            if (p.duplex && p.verb() == Verb.SEND) {
                throw usage.apply(" run_infinitely mode is not supported in SEND, SEND_IMM or WRITE_IMM "
                        + "Bidirectional BW test");
            }
            if (p.all) {
                throw usage.apply(" run_infinitely runs one message size: it cannot be combined with -a");
            }
            p.runInfinitely = true;
            if (!p.isDuration()) {
                p.duration = PerfParams.DEF_DURATION;
            }
            p.margin = 0; // every round is sampled whole, as perftest's alarm every duration seconds
        }
        p.cpuUtil = cpuUtil; // outside -D a warning, as perftest (PerfRun)
    }
}

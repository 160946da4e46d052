// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.SequencedMap;
import java.util.concurrent.Callable;
import java.util.function.ToDoubleFunction;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.plot.Charts;
import org.rdma4j.tools.study.PingpongStudy.Result;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j study pingpong}: the table of the seed "Introduction to RDMA Programming" (round trip
 * and CPU share of four ping-pongs), measured here and printed beside the seed's InfiniBand figures.
 */
@Command(name = "pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 2, sortOptions = false,
        description = {"The ping-pong table of \"Introduction to RDMA Programming\": the round-trip time and the "
                + "client's and server's user and kernel CPU share of four variants, printed beside the seed's "
                + "figures (InfiniBand QDR) with the ratios between the variants:",
            "  1 send-recv-busy           SEND/RECV, both sides busy-poll their CQs",
            "  2 send-recv-events         SEND/RECV, both sides wait for completion events",
            "  3 write-read-events        client: signaled RDMA WRITE, then RDMA READ,",
            "                             waiting with events; server: waits for a final SEND",
            "  4 unsig-write-read-events  as 3 with the WRITE unsignaled",
            "                             (only the READ is waited for)",
            "Client and server run in this process, each on its own thread: by default on soft0 and a second "
                    + "in-process soft device, with -d both on that device (e.g. rxe0)."})
public final class PingpongStudyCommand implements Callable<Integer> {
    /** The most timed round trips per variant: 8 bytes each are kept (400 MB at this limit). */
    static final int MAX_ITERS = 50_000_000;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, order = 1, paramLabel = "<dev>",
            description = "put both QPs on this device (default: client on soft0, server on a new in-process "
                    + "soft device)")
    String ibDev;

    @Option(names = {"-i", "--ib-port"}, order = 2, paramLabel = "<port>", converter = CNumber.class,
            description = "port of the device (default 1)")
    int ibPort = 1;

    @Option(names = {"-x", "-g", "--gid-index"}, order = 3, paramLabel = "<index>", converter = CNumber.class,
            description = "GID index (default: the first routable RoCE v2 GID)")
    int gidIndex = -1;

    @Option(names = {"-n", "--iters"}, order = 4, paramLabel = "<iters>", converter = CNumber.class,
            description = "timed round trips per variant (default ${DEFAULT-VALUE})")
    int iters = 20_000;

    @Option(names = {"-s", "--size"}, order = 5, paramLabel = "<bytes>", converter = ByteSize.class,
            description = "message size (default ${DEFAULT-VALUE})")
    long size = 8;

    @Option(names = "--warmup", order = 6, paramLabel = "<iters>", converter = CNumber.class,
            description = "untimed round trips before the timed ones, for the JIT (default ${DEFAULT-VALUE})")
    int warmup = 5_000;

    @Option(names = "--plot", order = 7, paramLabel = "<file.png>",
            description = "also draw the round trips (this file) and the CPU shares (<file>-cpu.png) beside "
                    + "the seed's as bar charts")
    Path plot;

    @Option(names = "--variants", order = 8, paramLabel = "<list>", split = ",",
            description = "run only these variants (numbers 1-4 or names), in this order (default all)")
    List<String> variantNames;

    @Option(names = "--examples", order = 9,
            description = "run the example programs themselves (examples/: the seed's four programs on rdma4j's "
                    + "connection manager) between two in-process soft devices, timed around their own loops")
    boolean examples;

    @Option(names = "--port", order = 10, paramLabel = "<port>", converter = CNumber.class,
            description = "with --examples: the first CM port the programs listen on, one more per run "
                    + "(default ${DEFAULT-VALUE})")
    int port = 7471;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (iters < 1 || iters > MAX_ITERS) {
            throw usage("-n " + iters + ": the number of round trips must be 1 to " + MAX_ITERS
                    + " (each one's time is kept for the percentiles)");
        }
        if (warmup < 0) {
            throw usage("--warmup " + warmup + " must be 0 or more");
        }
        if ((long) iters + warmup > Integer.MAX_VALUE) {
            throw usage("-n plus --warmup is too large");
        }
        if (size < 1 || size > (1 << 30)) {
            throw usage("-s " + size + ": the size must be 1 byte to 1 GiB");
        }
        if (ibPort < 1 || ibPort > 255) {
            throw usage("-i " + ibPort + ": the port must be 1..255");
        }
        if (gidIndex < -1 || gidIndex > 255) {
            throw usage("-x " + gidIndex + ": the GID index must be 0..255");
        }
        if (plot != null && !plot.toString().endsWith(".png")) {
            throw usage("--plot " + plot + ": the file name must end in .png");
        }
        List<Variant> variants = variants();
        if (!CpuSnapshot.supported()) {
            err.println("rdma4j study: this JVM cannot measure per-thread CPU time");
            err.flush();
            return 1;
        }

        if (examples) {
            return runExamples(out, err, variants);
        }
        Device clientDevice;
        Device serverDevice;
        Device created = null;
        try {
            if (ibDev != null) {
                clientDevice = Verbs.device(ibDev);
                serverDevice = clientDevice;
            } else {
                clientDevice = Verbs.device("soft0");
                created = Verbs.createDevice(DeviceSpec.of("soft", "loopback"));
                serverDevice = created;
            }
        } catch (VerbsException e) {
            err.println("rdma4j study: " + (ibDev != null ? "IB device " + ibDev + " not found: " : "")
                    + e.getMessage());
            err.flush();
            return 1;
        }
        String load = HostInfo.load();
        List<Result> results;
        try {
            PingpongStudy study = new PingpongStudy(
                    new PingpongStudy.Settings(ibPort, gidIndex, (int) size, iters, warmup), clientDevice, serverDevice);
            results = study.runAll(variants);
        } catch (StudyFailure e) {
            err.println("rdma4j study pingpong: " + e.getMessage());
            err.flush();
            return 1;
        } finally {
            if (created != null) {
                Verbs.removeDevice(created);
            }
        }
        String where = clientDevice == serverDevice
                ? "client and server QPs both on " + clientDevice.name() + " (" + clientDevice.provider() + ")"
                : "client on " + clientDevice.name() + ", server on " + serverDevice.name()
                        + " (two in-process soft devices on the loopback fabric)";
        print(out, results, where, load + " at start, " + HostInfo.load() + " at end",
                clientDevice.provider().equals("soft"));
        if (plot != null) {
            try {
                plot(results, clientDevice.name());
            } catch (RuntimeException e) {
                err.println("rdma4j study: --plot: " + e.getMessage());
                err.flush();
                return 1;
            }
            out.println("plots: " + plot + ", " + cpuPlot());
        }
        out.flush();
        return 0;
    }

    /** --examples: the programs of examples/ measured as they are (ExamplesStudy). */
    private int runExamples(PrintWriter out, PrintWriter err, List<Variant> variants) {
        if (ibDev != null || plot != null) {
            throw usage("--examples runs the programs between two in-process soft devices: no -d, no --plot");
        }
        if (size > 65536) {
            throw usage("-s " + size + ": the example programs take at most 64 KiB");
        }
        if (port < 1 || port > 65535 - 2 * variants.size()) {
            throw usage("--port " + port + " is outside 1.." + (65535 - 2 * variants.size()));
        }
        String load = HostInfo.load();
        List<ExamplesStudy.Row> rows;
        try {
            rows = new ExamplesStudy(iters, (int) size, warmup, port).runAll(variants);
        } catch (StudyFailure e) {
            err.println("rdma4j study pingpong: " + e.getMessage());
            err.flush();
            return 1;
        }
        out.printf(Locale.ROOT, "rdma4j study pingpong --examples: the example programs of \"Introduction to RDMA "
                + "Programming\" (examples/, on rdma4j's connection manager)%n");
        out.printf(Locale.ROOT, "client and server on two in-process soft devices; %s; %d timed round trips per "
                + "variant after %d warm-up%n", ByteSize.format(size), iters, warmup);
        out.printf(Locale.ROOT, "host: %s at start, %s at end%n%n", load, HostInfo.load());
        String fmt = "%-24s %8s %8s %8s %8s %8s %8s %10s %7s %11s %9s %9s %11s%n";
        out.printf(Locale.ROOT, fmt, "variant", "rtt_us", "cli_usr%", "cli_sys%", "cli_cpu%", "srv_cpu%", "dev_cpu%",
                "jvm_other%", "rtt/v1", "seed_rtt_us", "seed_cli%", "seed_srv%", "seed_rtt/v1");
        ExamplesStudy.Row base = rows.getFirst();
        for (ExamplesStudy.Row r : rows) {
            Variant v = r.variant();
            out.printf(Locale.ROOT, fmt, v.id, f2(r.rttUs()), f1(r.client().userPercent()),
                    f1(r.client().kernelPercent()), f1(r.client().totalPercent()), f1(r.server().totalPercent()),
                    f1(r.devices().totalPercent()), f1(r.otherPercent()), f2(r.rttUs() / base.rttUs()),
                    f1(v.seedRttUs), f1(v.seedClientTotal()), f1(v.seedServerTotal()),
                    f2(v.seedRttUs / base.variant().seedRttUs));
        }
        out.println();
        out.println("rtt_us: the client's timed loop over its round trips (no per-iteration times: the programs "
                + "keep none); CPU: each thread's CPU time over that loop, dev_cpu% the devices' and the CM's "
                + "threads (rdma4j-*)");
        out.flush();
        return 0;
    }

    private List<Variant> variants() {
        if (variantNames == null || variantNames.isEmpty()) {
            return List.of(Variant.values());
        }
        List<Variant> list = new ArrayList<>();
        for (String name : variantNames) {
            Variant found = null;
            for (Variant v : Variant.values()) {
                if (name.equals(v.id) || name.equals(Integer.toString(v.ordinal() + 1))) {
                    found = v;
                }
            }
            if (found == null) {
                throw usage("--variants: '" + name + "' is not 1-4 or one of send-recv-busy, send-recv-events, "
                        + "write-read-events, unsig-write-read-events");
            }
            list.add(found);
        }
        return list;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    // ---------------------------------------------------------------------------------------------
    // Output

    /** The column names of the table, in order; rows split on whitespace. */
    static final String[] COLUMNS = {"variant", "rtt_us", "p50_us", "p99_us", "cli_usr%", "cli_sys%", "cli_cpu%",
        "srv_usr%", "srv_sys%", "srv_cpu%", "dev_cpu%", "jvm_other%", "cli_runq%", "srv_runq%", "cli_waits", "srv_waits", "rtt/v1", "seed_rtt_us", "seed_cli%",
        "seed_srv%", "seed_rtt/v1"};

    private void print(PrintWriter out, List<Result> results, String where, String load, boolean soft) {
        out.printf(Locale.ROOT, "rdma4j study pingpong: the four ping-pongs of \"Introduction to RDMA Programming\"%n");
        out.printf(Locale.ROOT, "%s; %s; %d timed round trips per variant after %d warm-up%n", where,
                ByteSize.format(size), iters, warmup);
        out.printf(Locale.ROOT, "host: %s%n%n", load);
        String fmt = "%-24s %8s %7s %8s %8s %8s %8s %8s %8s %8s %8s %10s %9s %9s %9s %9s %7s %11s %9s %9s %11s%n";
        out.printf(Locale.ROOT, fmt, (Object[]) COLUMNS);
        Result base = results.getFirst();
        for (Result r : results) {
            Variant v = r.variant();
            out.printf(Locale.ROOT, fmt, v.id, f2(r.meanRttUs()), f2(r.medianRttUs()), f2(r.p99RttUs()),
                    f1(r.client().userPercent()), f1(r.client().kernelPercent()), f1(r.client().totalPercent()),
                    f1(r.server().userPercent()), f1(r.server().kernelPercent()), f1(r.server().totalPercent()),
                    f1(r.devices().totalPercent()), f1(r.otherPercent()), f1(r.clientRunQueuePercent()),
                    f1(r.serverRunQueuePercent()), f2(r.clientWaitsPerIter()),
                    f2(r.serverWaitsPerIter()), f2(r.meanRttUs() / base.meanRttUs()),
                    f1(v.seedRttUs), f1(v.seedClientTotal()), f1(v.seedServerTotal()),
                    f2(v.seedRttUs / base.variant().seedRttUs));
        }
        out.println();
        String oursRtt = ranking(results, Result::meanRttUs);
        String oursP50 = ranking(results, Result::medianRttUs);
        String seedRtt = ranking(results, r -> r.variant().seedRttUs);
        String oursCpu = ranking(results, r -> r.client().totalPercent());
        String seedCpu = ranking(results, r -> r.variant().seedClientTotal());
        out.printf(Locale.ROOT, "round trip (mean), fastest first:    ours %s   seed %s%s%n", oursRtt, seedRtt,
                same(oursRtt, seedRtt));
        out.printf(Locale.ROOT, "round trip (median), fastest first:  ours %s   seed %s%s%n", oursP50, seedRtt,
                same(oursP50, seedRtt));
        out.printf(Locale.ROOT, "client CPU, least first:             ours %s   seed %s%s%n", oursCpu, seedCpu,
                same(oursCpu, seedCpu));
        out.println();
        for (String note : notes(results, soft)) {
            out.println(note);
        }
    }

    private static String same(String ours, String seed) {
        return ours.equals(seed) ? "   (same order)" : "   (differs, see note 7)";
    }

    private static String ranking(List<Result> results, ToDoubleFunction<Result> key) {
        List<Result> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparingDouble(key));
        StringBuilder sb = new StringBuilder();
        for (Result r : sorted) {
            sb.append(sb.isEmpty() ? "" : " < ").append(r.variant().ordinal() + 1);
        }
        return sb.toString();
    }

    private List<String> notes(List<Result> results, boolean soft) {
        List<String> n = new ArrayList<>();
        n.add("notes:");
        n.add(" 1. rtt_us: mean round trip over the timed iterations (elapsed / n), as the seed reports it; p50_us, "
                + "p99_us: percentiles of the");
        n.add("    per-iteration times. rtt/v1, seed_rtt/v1: round trip relative to variant 1, ours and the seed's. "
                + "Seed: InfiniBand QDR 4x");
        n.add("    through a switch, two hosts; here client and server share one process and one host.");
        n.add(" 2. CPU: % of the timed phase's wall-clock time, per thread (ThreadMXBean): the total from the "
                + "thread's CPU clock (ns), user");
        n.add("    from utime in /proc/self/task/TID/stat (10 ms ticks), sys = total - user. cli_/srv_ are the "
                + "client's and the server's thread.");
        n.add(" 3. Work is charged to the thread that runs it. " + (soft
                ? "The soft device's in-process fabric runs the peer's receive side on the sending"
                : "The native provider's kernel (rxe) runs its transport in the poster's system calls and in"));
        n.add(soft
                ? "    thread: a WRITE or READ is served on the client's thread, so the passive server uses ~0 % as in "
                        + "the seed (where the HCA did it)."
                : "    softirqs, partly charged to whichever thread they interrupted or to ksoftirqd (not in this "
                        + "process): the kernel share is a lower bound.");
        n.add(" 4. dev_cpu%: the device's own threads (rdma4j-*: " + deviceThreads(results) + "); jvm_other%: the "
                + "rest of this process (JIT, GC, ...).");
        n.add(" 5. cli_runq%, srv_runq%: the share of the time the thread was runnable but waited for a CPU "
                + "(/proc/self/task/TID/schedstat):");
        n.add("    on a loaded host a thread that never blocks shows cpu% below 100 by this much.");
        n.add(" 6. cli_waits, srv_waits: blocking waits for a completion event per round trip (getEvent returned an "
                + "event); a completion that a");
        n.add("    poll found first needs none. Variant 1 never waits; in 2 each side may wait twice (send, receive).");
        n.add(" 7. Where the order differs from the seed's: " + (soft ? SOFT_RANKING : NATIVE_RANKING));
        return n;
    }

    private static String deviceThreads(List<Result> results) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (Result r : results) {
            names.addAll(r.deviceThreadNs().keySet());
        }
        return names.isEmpty() ? "none" : String.join(", ", names);
    }

    static final String SOFT_RANKING = """
            what moves each variant here.
                (a) One-sided (3, 4): on the seed's HCA they run without the server's CPU and the client sleeps
                until its READ completes (~30 % CPU). The soft device's in-process fabric runs the whole operation
                (the server's responder, the ACK or READ response, the completion) on the client's thread inside
                postSend, so the completion is there at the first poll: the client never blocks (cli_waits 0) and
                its CPU share is ~100 % less its run-queue wait, not ~30 %. Their round trip is one thread's work
                with no hand-off, the cheapest of the four; 4 < 3 as in the seed (one completion less).
                (b) SEND/RECV with events (2): most completions need a futex wake-up of a parked thread
                (cli_waits + srv_waits per round trip), several microseconds against sub-microsecond operations,
                so 2 costs several times 1 when cores are free (the seed: 1.34x); its CPU share is the lowest of
                the two-sided variants, as in the seed.
                (c) Busy polling (1) needs a free core per spinning thread. With fewer (cli_runq%, srv_runq% high)
                a spinner burns its time slice while its peer waits to be scheduled, and the mean round trip,
                unlike the median, becomes the slowest of all: compare the medians then.""";

    static final String NATIVE_RANKING = """
            a kernel device runs the transport in system calls, softirqs
                and its own kernel threads, partly outside this process's accounting (see note 3); the device's
                latency and this kernel's cost of a completion event decide the order. docs/PERFORMANCE.md discusses
                the figures measured on rxe.""";

    private static String f1(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.1f", v) : "-";
    }

    private static String f2(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.2f", v) : "-";
    }

    private Path cpuPlot() {
        String name = plot.getFileName().toString();
        return plot.resolveSibling(name.substring(0, name.length() - ".png".length()) + "-cpu.png");
    }

    private void plot(List<Result> results, String device) {
        int k = results.size();
        String[] categories = new String[k];
        double[] mean = new double[k];
        double[] median = new double[k];
        double[] seed = new double[k];
        double[] cli = new double[k];
        double[] cliRunq = new double[k];
        double[] srv = new double[k];
        double[] srvRunq = new double[k];
        double[] seedCli = new double[k];
        double[] seedSrv = new double[k];
        for (int i = 0; i < k; i++) {
            Result r = results.get(i);
            categories[i] = (r.variant().ordinal() + 1) + ". " + r.variant().title;
            mean[i] = r.meanRttUs();
            median[i] = r.medianRttUs();
            seed[i] = r.variant().seedRttUs;
            cli[i] = r.client().totalPercent();
            cliRunq[i] = r.clientRunQueuePercent();
            srv[i] = r.server().totalPercent();
            srvRunq[i] = r.serverRunQueuePercent();
            seedCli[i] = r.variant().seedClientTotal();
            seedSrv[i] = r.variant().seedServerTotal();
        }
        SequencedMap<String, double[]> rtt = new LinkedHashMap<>();
        rtt.put("rdma4j on " + device + ", mean", mean);
        rtt.put("rdma4j on " + device + ", median", median);
        rtt.put("seed: InfiniBand QDR (mean)", seed);
        Charts.bars(plot, "Ping-pong round trip, " + ByteSize.format(size), "round trip (µs)", categories, rtt);
        SequencedMap<String, double[]> cpu = new LinkedHashMap<>();
        cpu.put("client CPU", cli);
        cpu.put("client waiting for a CPU", cliRunq);
        cpu.put("server CPU", srv);
        cpu.put("server waiting for a CPU", srvRunq);
        cpu.put("client CPU, seed", seedCli);
        cpu.put("server CPU, seed", seedSrv);
        Charts.bars(cpuPlot(), "Ping-pong CPU share (user + kernel), and time runnable but waiting for a CPU",
                "% of elapsed time", categories, cpu);
    }
}

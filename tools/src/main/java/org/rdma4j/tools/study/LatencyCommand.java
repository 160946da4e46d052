// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.SequencedMap;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import org.rdma4j.tools.cli.CNumber;
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
 * {@code rdma4j study latency}: exercise 3 of the seed "RDMA fundamentals" (004), a ping-pong over UDP
 * sockets and over RDMA whose latency distributions are compared: a percentile table beside the UDP
 * busy-poll floor of the same run, and (--plot) HdrHistogram's percentile curves.
 */
@Command(name = "latency", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 2, sortOptions = false,
        description = {"Round-trip latency distributions over UDP sockets and RDMA, method by method (seed 004, "
                + "exercise 3):",
            "  udp-busy      UDP sockets, both sides busy-poll (the floor, always run)",
            "  udp-block     UDP sockets, both sides block in receive",
            "  send-busy     RDMA SEND/RECV (RC), both sides spin on their CQs",
            "  send-events   RDMA SEND/RECV, both sides wait for completion events",
            "  write-busy    RDMA WRITE; the peer polls the message's last byte",
            "  write-events  RDMA WRITE with immediate; the peer waits for the event",
            "Printed as percentiles in us, each median also as a ratio to udp-busy's; --plot draws the percentile "
                + "curves (HdrHistogram's percentile distribution).",
            "By default on soft0 and a new in-process soft device, one thread each; with -d both QPs on that "
                + "device; with --link udp|shm the echo side is a second JVM (started by this one), the two JVMs' "
                + "soft RoCEv2 devices on 127.0.0.3 and 127.0.0.4 exchanging packets as UDP datagrams or through "
                + "shared memory."})
public final class LatencyCommand implements Callable<Integer> {
    /** The most timed round trips per method (8 bytes each are kept until the run ends). */
    static final int MAX_ITERS = 50_000_000;
    /** The largest message: one UDP datagram. */
    static final int MAX_SIZE = 65_507;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, order = 1, paramLabel = "<dev>",
            description = "put both QPs on this device (default: soft0 and a new in-process soft device)")
    String ibDev;

    @Option(names = {"-i", "--ib-port"}, order = 2, paramLabel = "<port>", converter = CNumber.class,
            description = "port of the device (default 1)")
    int ibPort = 1;

    @Option(names = {"-x", "-g", "--gid-index"}, order = 3, paramLabel = "<index>", converter = CNumber.class,
            description = "GID index (default: the first routable RoCE v2 GID; with --link, 1: the address)")
    int gidIndex = -1;

    @Option(names = {"-n", "--iters"}, order = 4, paramLabel = "<iters>", converter = CNumber.class,
            description = "timed round trips per method (default ${DEFAULT-VALUE})")
    int iters = 20_000;

    @Option(names = "--warmup", order = 5, paramLabel = "<iters>", converter = CNumber.class,
            description = "untimed round trips before them, for the JIT (default ${DEFAULT-VALUE})")
    int warmup = 5_000;

    @Option(names = {"-s", "--size"}, order = 6, paramLabel = "<bytes>", converter = ByteSize.class,
            description = "message size, 1 to " + MAX_SIZE + " (default ${DEFAULT-VALUE})")
    long size = 8;

    @Option(names = "--methods", order = 7, paramLabel = "<list>", split = ",",
            description = "run only these methods, in this order (udp-busy, the floor, is always run first)")
    List<String> methodNames;

    @Option(names = "--link", order = 8, paramLabel = "udp|shm",
            description = "run the echo side in a second JVM; its soft RoCEv2 device and this one's exchange "
                    + "packets as UDP datagrams (udp) or through shared-memory rings (shm)")
    String link;

    @Option(names = "--plot", order = 9, paramLabel = "<file.png>",
            description = "also draw the latency percentile curves (one per method) into this PNG")
    Path plot;

    @Option(names = "--serve", hidden = true, description = "the echo side of a --link run (started by it)")
    boolean serve;

    @Option(names = "--udp-port", hidden = true, converter = CNumber.class,
            description = "with --serve: the devices' UDP port")
    int udpPort;

    /** One method's round trips, sorted, in ns, and the retransmissions counted (-1: not known). */
    record Row(LatencyMethod method, long[] sortedNs, long retransmits) {
        double percentileUs(double p) {
            int i = (int) Math.ceil(p / 100.0 * sortedNs.length) - 1;
            return sortedNs[Math.clamp(i, 0, sortedNs.length - 1)] / 1000.0;
        }

        double meanUs() {
            double sum = 0;
            for (long v : sortedNs) {
                sum += v;
            }
            return sum / sortedNs.length / 1000.0;
        }
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        check();
        List<LatencyMethod> methods = methods();
        LatencySettings s = new LatencySettings((int) size, iters, warmup, ibPort,
                link != null && gidIndex < 0 ? 1 : gidIndex);
        if (serve) {
            return LatencyPeerProcess.serve(s, methods, link, udpPort);
        }
        String load = HostInfo.load();
        List<Measured> results;
        String where;
        try {
            if (link != null) {
                int port = LatencyPeerProcess.freePort();
                List<String> childArgs = new ArrayList<>(List.of("study", "latency", "--serve", "--link", link,
                        "--udp-port", Integer.toString(port), "-n", Integer.toString(iters), "--warmup",
                        Integer.toString(warmup), "-s", Long.toString(size), "-i", Integer.toString(ibPort), "-x",
                        Integer.toString(s.gidIndex()), "--methods", String.join(",",
                                methods.stream().map(m -> m.id).toList())));
                where = "two JVMs: this one on " + LatencyPeerProcess.CLIENT_ADDRESS + ", the echo side (a JVM it "
                        + "starts) on " + LatencyPeerProcess.SERVER_ADDRESS + "; soft RoCEv2 devices on UDP port "
                        + port + ", link=" + link + (link.equals("shm") ? " (shared-memory rings)" : " (UDP datagrams)")
                        + "; the UDP sockets between the same addresses";
                results = LatencyPeerProcess.run(s, methods, link, port, childArgs);
            } else {
                Device client;
                Device server;
                Device created = null;
                if (ibDev != null) {
                    client = Verbs.device(ibDev);
                    server = client;
                    where = "both QPs on " + client.name() + " (" + client.provider() + "), client and echo side on "
                            + "two threads of this JVM; the UDP sockets on 127.0.0.1";
                } else {
                    client = Verbs.device("soft0");
                    created = Verbs.createDevice(DeviceSpec.of("soft", "loopback"));
                    server = created;
                    where = "one JVM: client on soft0, echo side on " + created.name() + " (two in-process soft devices "
                            + "on the loopback fabric), a thread each; the UDP sockets on 127.0.0.1";
                }
                try {
                    results = LatencyStudy.inProcess(methods, LatencyStudy.client(s, client, "127.0.0.1"),
                            LatencyStudy.server(s, server, "127.0.0.1"));
                } finally {
                    if (created != null) {
                        Verbs.removeDevice(created);
                    }
                }
            }
        } catch (StudyFailure | VerbsException e) {
            err.println("rdma4j study latency: " + e.getMessage());
            err.flush();
            return 1;
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < methods.size(); i++) {
            long[] ns = results.get(i).rttNs().clone();
            Arrays.sort(ns);
            rows.add(new Row(methods.get(i), ns, results.get(i).retransmits()));
        }
        String hosts = load + " at start, " + HostInfo.load() + " at end";
        print(out, rows, where, hosts);
        if (plot != null) {
            try {
                plot(rows, where);
            } catch (RuntimeException e) {
                err.println("rdma4j study latency: --plot: " + e.getMessage());
                err.flush();
                return 1;
            }
            out.println("plot: " + plot);
        }
        out.flush();
        return 0;
    }

    private void check() {
        if (iters < 1 || iters > MAX_ITERS) {
            throw usage("-n " + iters + ": the number of round trips must be 1 to " + MAX_ITERS);
        }
        if (warmup < 0) {
            throw usage("--warmup " + warmup + ": must be 0 or more");
        }
        if ((long) iters + warmup > Integer.MAX_VALUE) {
            throw usage("-n plus --warmup is too large");
        }
        if (size < 1 || size > MAX_SIZE) {
            throw usage("-s " + size + ": the size must be 1 to " + MAX_SIZE + " bytes (one UDP datagram)");
        }
        if (ibPort < 1 || ibPort > 255) {
            throw usage("-i " + ibPort + ": the port must be 1..255");
        }
        if (gidIndex < -1 || gidIndex > 255) {
            throw usage("-x " + gidIndex + ": the GID index must be 0..255");
        }
        if (link != null && !link.equals("udp") && !link.equals("shm")) {
            throw usage("--link " + link + ": must be udp or shm");
        }
        if (link != null && ibDev != null) {
            throw usage("--link runs on soft RoCEv2 devices the two JVMs make: no -d with it");
        }
        if (serve && (link == null || udpPort < 1 || udpPort > 65535)) {
            throw usage("--serve is the echo side of a --link run and needs --link and --udp-port");
        }
        if (plot != null && !plot.toString().endsWith(".png")) {
            throw usage("--plot " + plot + ": the file name must end in .png");
        }
    }

    /** The methods asked for, udp-busy (the floor) first. */
    private List<LatencyMethod> methods() {
        List<LatencyMethod> list = new ArrayList<>();
        list.add(LatencyMethod.UDP_BUSY);
        if (methodNames == null || methodNames.isEmpty()) {
            return List.of(LatencyMethod.values());
        }
        for (String name : methodNames) {
            LatencyMethod m = LatencyMethod.byId(name.strip());
            if (m == null) {
                throw usage("--methods: '" + name + "' is not one of " + LatencyMethod.ids());
            }
            if (!list.contains(m)) {
                list.add(m);
            }
        }
        return list;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** The column names of the table; rows split on whitespace. */
    static final String[] COLUMNS = {"method", "p50_us", "p90_us", "p99_us", "p99.9_us", "max_us", "mean_us",
        "p50/udp-busy", "retransmits"};

    private void print(PrintWriter out, List<Row> rows, String where, String load) {
        out.printf(Locale.ROOT, "rdma4j study latency: round trips over UDP sockets and RDMA (seed 004, \"RDMA "
                + "fundamentals\", exercise 3)%n");
        out.printf(Locale.ROOT, "%s%n", where);
        out.printf(Locale.ROOT, "%s messages; %d timed round trips per method after %d warm-up%n",
                ByteSize.format(size), iters, warmup);
        out.printf(Locale.ROOT, "host: %s%n%n", load);
        String fmt = "%-13s %10s %10s %10s %10s %10s %10s %13s %12s%n";
        out.printf(Locale.ROOT, fmt, (Object[]) COLUMNS);
        double floor = rows.getFirst().percentileUs(50);
        for (Row r : rows) {
            out.printf(Locale.ROOT, fmt, r.method().id, us(r.percentileUs(50)), us(r.percentileUs(90)),
                    us(r.percentileUs(99)), us(r.percentileUs(99.9)), us(r.percentileUs(100)), us(r.meanUs()),
                    ratio(r.percentileUs(50) / floor),
                    r.retransmits() < 0 ? "-" : Long.toString(r.retransmits()));
        }
        out.println();
        out.println("p50..max: of each method's timed round trips (System.nanoTime around one ping and its answer; "
                + "nearest rank); p50/udp-busy: the method's median over the UDP busy-poll median of this run;");
        out.println("retransmits: what both RDMA devices counted over the method's run (warm-up included; \"-\" for "
                + "sockets): on a link that loses nothing, each is a timer that fired on a late packet.");
        out.println("A blocking method pays a wake-up per message on each side; on a host with fewer cores than "
                + "spinning threads the busy methods' tails are time slices lost to the other spinner.");
    }

    /** 2.66, 0.91, 0.0049: two decimals, or two significant digits below 0.1 (never a bare 0.00). */
    private static String ratio(double v) {
        return String.format(Locale.ROOT, v >= 0.1 ? "%.2f" : "%.2g", v);
    }

    private static String us(double v) {
        return String.format(Locale.ROOT, v < 100 ? "%.2f" : "%.1f", v);
    }

    private void plot(List<Row> rows, String where) {
        SequencedMap<String, Histogram> curves = new LinkedHashMap<>();
        for (Row r : rows) {
            Histogram h = new Histogram(3);
            for (long v : r.sortedNs()) {
                h.recordValue(Math.max(1, v));
            }
            curves.put(String.format(Locale.ROOT, "%s: %s (p50 %s µs, p99 %s µs)", r.method().id, r.method().title,
                    us(r.percentileUs(50)), us(r.percentileUs(99))), h);
        }
        String setting = link != null ? "two JVMs, soft RoCEv2 over " + (link.equals("shm") ? "shared memory" : "UDP")
                : ibDev != null ? "one JVM, both QPs on " + ibDev : "one JVM, two in-process soft devices";
        LatencyChart.write(plot, "Round-trip latency by percentile: " + setting,
                String.format(Locale.ROOT, "%s messages, %d round trips per method after %d warm-up; %s",
                        ByteSize.format(size), iters, warmup, HostInfo.load()), curves);
    }
}

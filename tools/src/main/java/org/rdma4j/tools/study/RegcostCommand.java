// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.SequencedMap;
import java.util.concurrent.Callable;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.plot.Charts;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j study regcost}: exercise 2 of the seed "RDMA fundamentals" (004): how long
 * {@code ibv_reg_mr} and {@code ibv_dereg_mr} take from 4 KiB to 1 GiB, on every device rdma4j sees.
 */
@Command(name = "regcost", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 2, sortOptions = false,
        description = {"Memory registration cost: ibv_reg_mr and ibv_dereg_mr of 4 KiB to --max bytes in powers "
                + "of 2, on every device (or those given with -d); the median of -n repetitions.",
            "The memory is one buffer written page by page before anything is timed, so the page faults of "
                    + "first touch are not counted as registration."})
public final class RegcostCommand implements Callable<Integer> {
    static final long PAGE = 4096;
    static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, order = 1, paramLabel = "<dev>",
            description = "measure only this device (may be repeated; default every device)")
    List<String> devices;

    @Option(names = "--max", order = 2, paramLabel = "<bytes>", converter = ByteSize.class,
            description = "largest size, a power of 2 from 4K (default 1G)")
    long max = 1L << 30;

    @Option(names = {"-n", "--iters"}, order = 3, paramLabel = "<n>", converter = CNumber.class,
            description = "timed registrations per size, after one untimed (default ${DEFAULT-VALUE})")
    int reps = 5;

    @Option(names = "--warmup", order = 4, paramLabel = "<n>", converter = CNumber.class,
            description = "untimed 4 KiB registrations per device first, so the JIT has compiled the path as in "
                    + "a long-running program (default ${DEFAULT-VALUE})")
    int warmup = 2000;

    @Option(names = "--plot", order = 5, paramLabel = "<file.png>",
            description = "also draw registration and deregistration time against size (log-log)")
    Path plot;

    /** One size on one device: medians in µs, or the error that stopped the device. */
    record Row(String device, String provider, long bytes, double regUs, double deregUs, String error) {}

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (max < PAGE || Long.bitCount(max) != 1) {
            throw new ParameterException(spec.commandLine(), "--max " + max + ": must be a power of 2 of at least 4K");
        }
        if (max > (1L << 40)) {
            throw new ParameterException(spec.commandLine(), "--max " + max + ": at most 1T");
        }
        if (reps < 1) {
            throw new ParameterException(spec.commandLine(), "-n " + reps + ": must be 1 or more");
        }
        if (warmup < 0) {
            throw new ParameterException(spec.commandLine(), "--warmup " + warmup + ": must be 0 or more");
        }
        if (plot != null && !plot.toString().endsWith(".png")) {
            throw new ParameterException(spec.commandLine(), "--plot " + plot + ": the file name must end in .png");
        }
        List<Device> chosen = new ArrayList<>();
        try {
            if (devices == null || devices.isEmpty()) {
                chosen.addAll(Verbs.devices());
            } else {
                for (String d : devices) {
                    chosen.add(Verbs.device(d));
                }
            }
        } catch (VerbsException e) {
            err.println("rdma4j study regcost: " + e.getMessage());
            err.flush();
            return 1;
        }
        if (chosen.isEmpty()) {
            err.println("rdma4j study regcost: no RDMA devices found");
            err.flush();
            return 1;
        }
        String load = HostInfo.load();
        List<Row> rows = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buf;
            try {
                buf = arena.allocate(max, PAGE);
            } catch (OutOfMemoryError | IllegalArgumentException e) {
                err.println("rdma4j study regcost: cannot allocate " + ByteSize.format(max) + " (" + e.getMessage()
                        + "); lower --max, or raise the JVM's -XX:MaxDirectMemorySize (RDMA4J_JAVA_OPTS)");
                err.flush();
                return 1;
            }
            // First touch: write every page, so each is mapped before anything is timed.
            for (long off = 0; off < max; off += PAGE) {
                buf.set(ValueLayout.JAVA_BYTE, off, (byte) 1);
            }
            for (Device d : chosen) {
                rows.addAll(measure(d, buf));
            }
        }
        print(out, rows, load);
        if (plot != null) {
            try {
                plot(rows);
            } catch (RuntimeException e) {
                err.println("rdma4j study: --plot: " + e.getMessage());
                err.flush();
                return 1;
            }
            out.println("plot: " + plot);
        }
        out.flush();
        boolean anyFailed = rows.stream().anyMatch(r -> r.error() != null);
        return anyFailed ? 1 : 0;
    }

    private List<Row> measure(Device d, MemorySegment buf) {
        List<Row> rows = new ArrayList<>();
        long[] reg = new long[reps];
        long[] dereg = new long[reps];
        try (Context ctx = d.open(); ProtectionDomain pd = ctx.allocPd()) {
            MemorySegment page = buf.asSlice(0, PAGE);
            for (int i = 0; i < warmup; i++) {
                pd.regMr(page, ACCESS).close();
            }
            for (long size = PAGE; size <= max; size <<= 1) {
                MemorySegment slice = buf.asSlice(0, size);
                try {
                    pd.regMr(slice, ACCESS).close(); // untimed: the first registration of a size
                    for (int i = 0; i < reps; i++) {
                        long t0 = System.nanoTime();
                        MemoryRegion mr = pd.regMr(slice, ACCESS);
                        long t1 = System.nanoTime();
                        mr.close();
                        long t2 = System.nanoTime();
                        reg[i] = t1 - t0;
                        dereg[i] = t2 - t1;
                    }
                } catch (VerbsException e) {
                    rows.add(new Row(d.name(), d.provider(), size, Double.NaN, Double.NaN, e.getMessage()));
                    break; // a larger size fails the same way (e.g. ENOMEM: the locked-memory limit)
                }
                rows.add(new Row(d.name(), d.provider(), size, median(reg) / 1000.0, median(dereg) / 1000.0, null));
            }
        } catch (VerbsException e) {
            rows.add(new Row(d.name(), d.provider(), 0, Double.NaN, Double.NaN, e.getMessage()));
        }
        return rows;
    }

    private static double median(long[] values) {
        long[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    }

    /** The column names; rows split on whitespace. */
    static final String[] COLUMNS = {"device", "provider", "bytes", "size", "reg_us", "dereg_us", "reg_ns/page"};

    private void print(PrintWriter out, List<Row> rows, String load) {
        out.printf(Locale.ROOT, "rdma4j study regcost: ibv_reg_mr / ibv_dereg_mr by size (seed 004, exercise 2)%n");
        out.printf(Locale.ROOT, "memory: one %s buffer, every 4 KiB page written before timing (first-touch page "
                + "faults are not counted); access %s;%n", ByteSize.format(max), Access.toString(ACCESS));
        out.printf(Locale.ROOT, "median of %d registrations (and their deregistrations) per size, after one untimed;"
                + " %d untimed 4 KiB ones per device first (JIT warm-up)%n", reps, warmup);
        out.printf(Locale.ROOT, "host: %s%n%n", load);
        String fmt = "%-10s %-8s %12s %8s %12s %12s %12s%n";
        out.printf(Locale.ROOT, fmt, (Object[]) COLUMNS);
        for (Row r : rows) {
            if (r.error() != null) {
                out.printf(Locale.ROOT, "%-10s %-8s %12d %8s failed: %s%n", r.device(), r.provider(), r.bytes(),
                        ByteSize.format(r.bytes()).replace(" ", ""), r.error());
                continue;
            }
            out.printf(Locale.ROOT, fmt, r.device(), r.provider(), r.bytes(), ByteSize.format(r.bytes()).replace(" ", ""),
                    String.format(Locale.ROOT, "%.2f", r.regUs()), String.format(Locale.ROOT, "%.2f", r.deregUs()),
                    String.format(Locale.ROOT, "%.1f", r.regUs() * 1000.0 / (r.bytes() / PAGE)));
        }
        out.println();
        out.println("notes: reg_us, dereg_us: System.nanoTime() around each call, median per size. On the soft "
                + "device registration");
        out.println("  records the segment and makes keys (nothing is pinned: the JVM's memory is already where "
                + "the device reads it), so");
        out.println("  its cost does not grow with size. A kernel device (rxe, a NIC) pins every page and builds "
                + "its translation table:");
        out.println("  linear in the pages, the seed's ~2 us per page. Failed rows: ENOMEM usually means the "
                + "locked-memory limit (ulimit -l).");
    }

    private void plot(List<Row> rows) {
        SequencedMap<String, double[][]> series = new LinkedHashMap<>();
        for (String dev : rows.stream().map(Row::device).distinct().toList()) {
            List<Row> ok = rows.stream().filter(r -> r.device().equals(dev) && r.error() == null).toList();
            if (ok.isEmpty()) {
                continue;
            }
            double[] xs = ok.stream().mapToDouble(r -> r.bytes()).toArray();
            series.put(dev + " reg_mr", new double[][] {xs, ok.stream().mapToDouble(Row::regUs).toArray()});
            series.put(dev + " dereg_mr", new double[][] {xs, ok.stream().mapToDouble(Row::deregUs).toArray()});
        }
        if (series.isEmpty()) {
            throw new IllegalArgumentException("no successful registration to plot");
        }
        Charts.lines(plot, "Memory registration cost (median of " + reps + ")", "buffer size (bytes)",
                "time per call (µs)", true, true, series);
    }
}

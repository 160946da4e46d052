// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * The soft device between two processes next to the in-process figure and the memcpy floor, measured
 * side by side in one run (a main class, not JMH: the peer is a second JVM this one starts):
 * <ul>
 *   <li>write_lat: {@code ib_write_lat}'s round trip (each side writes an incrementing 8-byte counter,
 *       inline and signaled, into the other's memory and spins on its own; the poster reaps its
 *       completion), reported as perftest does: the median of round trip / 2. In-process (two
 *       loopback devices, the pong side a second thread), then over shared memory and over UDP to a
 *       child JVM ({@code --bind}-style devices on 127.0.0.1 and 127.0.0.2, {@code link=shm} / {@code
 *       link=udp}).</li>
 *   <li>write_bw: 64 KiB WRITEs, 16 in flight, every one signaled, for a few seconds, to the child over
 *       shared memory and in-process; next to single-thread {@code MemorySegment.copy} of 64 KiB.</li>
 * </ul>
 * {@snippet lang=sh :
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.rdma4j.bench.CrossProcessBenchmark
 * # options: iters=20000 warmup=5000 seconds=3 size=65536 modes=inproc,shm,udp
 * # -Drdma4j.shm.icrc=false (and any other rdma4j.* property) applies to the child too
 * }
 */
public final class CrossProcessBenchmark {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final int ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
    static final long LANDING = 0;
    static final long STAGING = 64;
    static final long BW_AT = 4096;
    static final int DEPTH = 16;

    private CrossProcessBenchmark() {}

    /** One side: device, QP, CQ and a registered buffer. */
    static final class Side implements AutoCloseable {
        final Device created;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final Arena arena = Arena.ofShared();
        final MemorySegment buf;
        final MemoryRegion mr;
        final PreparedQueuePair prepared;
        final WorkCompletion[] wc = WorkCompletion.array(DEPTH);

        Side(Device created, Device dev, long bytes) {
            this.created = created;
            ctx = dev.open();
            pd = ctx.allocPd();
            cq = ctx.createCq(4 * DEPTH);
            qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(2 * DEPTH, 4, 1, 1, 64)));
            buf = arena.allocate(bytes, 4096);
            mr = pd.regMr(buf, ALL);
            prepared = pd.queuePair(QpType.RC, cq).recvCq(cq).gidIndex(1).mtu(Mtu.MTU_4096).access(ALL)
                    .maxRdAtomic(1).maxDestRdAtomic(1).minRnrTimer(1).timeout(18).retryCnt(7).rnrRetry(7).psn(0)
                    .prepare(qp);
        }

        /** The line the peer needs: endpoint, rkey, buffer address. */
        String describe() {
            return prepared.endpoint() + " " + mr.rkey() + " " + mr.address();
        }

        int reap(int max) {
            int n = cq.poll(wc, max);
            for (int i = 0; i < n; i++) {
                if (wc[i].status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("completion failed: " + wc[i]);
                }
            }
            return n;
        }

        @Override
        public void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
            ctx.close();
            if (created != null) {
                Verbs.removeDevice(created);
            }
            arena.close();
        }
    }

    /** The far side's numbers: rkey and address. */
    record Remote(int rkey, long addr) {
        static Remote connect(Side s, String line) {
            String[] f = line.split(" ");
            s.prepared.handshake(QpEndpoint.parse(f[0]));
            return new Remote(Integer.parseInt(f[1]), Long.parseLong(f[2]));
        }
    }

    /** Every wait of the loops ends by then: a lost peer fails the run with the device's counters. */
    static final long STALL_NS = 30_000_000_000L;

    static void stalled(Side s, long sinceNs, String what) {
        if (System.nanoTime() - sinceNs > STALL_NS) {
            throw new IllegalStateException("no progress for " + STALL_NS / 1_000_000_000L + " s waiting for " + what
                    + "; counters " + s.ctx.counters(1));
        }
    }

    /** The pong loop of write_lat: wait for value v in LANDING, write v back; until {@code iters} done. */
    static void pong(Side s, Remote r, int iters) {
        SendWorkRequest w = new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_WRITE)
                .flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(s.mr, STAGING, 8).rdma(r.addr() + LANDING, r.rkey());
        int spins = 0;
        for (long v = 1; v <= iters; v++) {
            long t = System.nanoTime();
            while ((long) LONG.getAcquire(s.buf, LANDING) != v) {
                spins = Backoff.idle(spins);
                if ((spins & 1023) == 0) {
                    stalled(s, t, "ping " + v);
                }
            }
            spins = 0;
            s.buf.set(ValueLayout.JAVA_LONG, STAGING, v);
            s.qp.postSend(w);
            t = System.nanoTime();
            while (s.reap(1) == 0) {
                spins = Backoff.idle(spins);
                if ((spins & 1023) == 0) {
                    stalled(s, t, "the completion of pong " + v);
                }
            }
        }
    }

    /** The ping loop: returns the round trip of each iteration, in ns. */
    static long[] ping(Side s, Remote r, int iters) {
        SendWorkRequest w = new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE)
                .flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(s.mr, STAGING, 8).rdma(r.addr() + LANDING, r.rkey());
        long[] rtt = new long[iters];
        int spins = 0;
        for (int i = 0; i < iters; i++) {
            long v = i + 1;
            long t0 = System.nanoTime();
            s.buf.set(ValueLayout.JAVA_LONG, STAGING, v);
            s.qp.postSend(w);
            while (s.reap(1) == 0) {
                spins = Backoff.idle(spins);
                if ((spins & 1023) == 0) {
                    stalled(s, t0, "the completion of ping " + v);
                }
            }
            while ((long) LONG.getAcquire(s.buf, LANDING) != v) {
                spins = Backoff.idle(spins);
                if ((spins & 1023) == 0) {
                    stalled(s, t0, "pong " + v);
                }
            }
            spins = 0;
            rtt[i] = System.nanoTime() - t0;
        }
        return rtt;
    }

    /** 64 KiB (size) WRITEs, DEPTH in flight, for {@code seconds}: bytes per second. */
    static double stream(Side s, Remote r, int size, double seconds) {
        SendWorkRequest w = new SendWorkRequest().wrId(3).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                .sge(s.mr, BW_AT, size).rdma(r.addr() + BW_AT, r.rkey());
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long t0 = System.nanoTime();
        long done = 0;
        int inFlight = 0;
        while (System.nanoTime() < end || inFlight > 0) {
            if (inFlight < DEPTH && System.nanoTime() < end) {
                s.qp.postSend(w);
                inFlight++;
                continue;
            }
            int n = s.reap(DEPTH);
            inFlight -= n;
            done += n;
            if (n == 0) {
                Thread.onSpinWait();
                stalled(s, end, "WRITE completions");
            }
        }
        return done * (double) size / ((System.nanoTime() - t0) / 1e9);
    }

    /** Single-thread memcpy of {@code size} bytes between two native segments, bytes per second. */
    static double memcpy(int size, double seconds) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment src = a.allocate(size, 4096);
            MemorySegment dst = a.allocate(size, 4096);
            src.fill((byte) 7);
            long n = 0;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long t0 = System.nanoTime();
            while (System.nanoTime() < end) {
                for (int i = 0; i < 64; i++) {
                    MemorySegment.copy(src, 0, dst, 0, size);
                }
                n += 64;
            }
            return n * (double) size / ((System.nanoTime() - t0) / 1e9);
        }
    }

    static double medianHalfUs(long[] rtt, int warmup) {
        long[] x = Arrays.copyOfRange(rtt, warmup, rtt.length);
        Arrays.sort(x);
        return x[x.length / 2] / 2000.0;
    }

    static double p99HalfUs(long[] rtt, int warmup) {
        long[] x = Arrays.copyOfRange(rtt, warmup, rtt.length);
        Arrays.sort(x);
        return x[(int) (x.length * 0.99)] / 2000.0;
    }

    // ------------------------------------------------------------------ child

    /** The child: {@code child LINK ADDR PORT ITERS}; pongs, then waits for a line (the stream phase) and exits. */
    static void child(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Device d = Verbs.createDevice("soft:udp?name=bench-child&addr=" + args[2] + "&port=" + args[3]
                + "&link=" + args[1]);
        try (Side s = new Side(d, d, 1 << 20)) {
            out.println(s.describe());
            Remote r = Remote.connect(s, in.readLine());
            out.println("READY");
            try {
                pong(s, r, Integer.parseInt(args[4]));
            } catch (RuntimeException e) {
                System.err.println("child: " + e.getMessage());
                throw e;
            }
            out.println("PONGED");
            in.readLine();
        }
    }

    // ------------------------------------------------------------------ parent

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child(args);
            return;
        }
        int iters = 20_000;
        int warmup = 5_000;
        double seconds = 3;
        int size = 65536;
        List<String> modes = List.of("inproc", "shm", "udp");
        for (String a : args) {
            String[] kv = a.split("=", 2);
            switch (kv[0]) {
                case "iters" -> iters = Integer.parseInt(kv[1]);
                case "warmup" -> warmup = Integer.parseInt(kv[1]);
                case "seconds" -> seconds = Double.parseDouble(kv[1]);
                case "size" -> size = Integer.parseInt(kv[1]);
                case "modes" -> modes = List.of(kv[1].split(","));
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        int total = iters + warmup;
        System.out.printf(Locale.ROOT, "# load %s%n", loadAverage());
        double copy = memcpy(size, seconds);
        System.out.printf(Locale.ROOT, "memcpy %d B (one thread): %.2f GB/s%n", size, copy / 1e9);
        for (String mode : modes) {
            if (mode.equals("inproc")) {
                Device peer = SoftDevices.createLoopback("xp-peer");
                try (Side a = new Side(null, Verbs.device(SoftDevices.DEFAULT_NAME), 1 << 20);
                     Side b = new Side(peer, peer, 1 << 20)) {
                    Remote ra = Remote.connect(a, b.describe());
                    Remote rb = Remote.connect(b, a.describe());
                    int n = total;
                    Thread t = Thread.ofPlatform().name("pong").start(() -> pong(b, rb, n));
                    long[] rtt = ping(a, ra, total);
                    t.join();
                    report(mode, rtt, warmup);
                    double bw = stream(a, ra, size, seconds);
                    System.out.printf(Locale.ROOT, "%-6s write_bw %d B: %.2f GB/s = %.3f of memcpy%n", mode, size,
                            bw / 1e9, bw / copy);
                }
                continue;
            }
            String javaBin = System.getProperty("java.home") + "/bin/java";
            String port = Integer.toString(SoftDevices.freeUdpPort(35791,
                    InetAddress.getByName("127.0.0.1"), InetAddress.getByName("127.0.0.2")));
            List<String> cmd = new ArrayList<>(List.of(javaBin, "--enable-native-access=ALL-UNNAMED"));
            System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("rdma4j."))
                    .forEach(k -> cmd.add("-D" + k + "=" + System.getProperty(k))); // the child runs as we do
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), CrossProcessBenchmark.class.getName(),
                    "child", mode, "127.0.0.2", port, Integer.toString(total)));
            Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Device d = Verbs.createDevice("soft:udp?name=bench-parent&addr=127.0.0.1&port=" + port + "&link=" + mode);
            try (Side a = new Side(d, d, 1 << 20);
                 BufferedReader in = child.inputReader(StandardCharsets.UTF_8);
                 PrintStream toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8)) {
                Remote r = Remote.connect(a, in.readLine());
                toChild.println(a.describe());
                expect(in, "READY");
                long[] rtt;
                try {
                    rtt = ping(a, r, total);
                } catch (RuntimeException e) {
                    child.destroyForcibly();
                    throw e;
                }
                expect(in, "PONGED");
                report(mode, rtt, warmup);
                if (mode.equals("shm")) {
                    double bw = stream(a, r, size, seconds);
                    System.out.printf(Locale.ROOT, "%-6s write_bw %d B: %.2f GB/s = %.3f of memcpy%n", mode, size,
                            bw / 1e9, bw / copy);
                }
                toChild.println("EXIT");
                System.out.printf(Locale.ROOT, "%-6s parent counters: %s%n", mode, a.ctx.counters(1).entrySet().stream()
                        .filter(e -> e.getKey().startsWith("shm_") || e.getKey().startsWith("udp_sent")
                                || e.getKey().equals("retransmits"))
                        .map(e -> e.getKey() + "=" + e.getValue()).toList());
            } finally {
                if (!child.waitFor(20, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
        }
        System.out.printf(Locale.ROOT, "# load %s%n", loadAverage());
    }

    private static void expect(BufferedReader in, String what) throws java.io.IOException {
        String l = in.readLine();
        if (!what.equals(l)) {
            throw new IllegalStateException("the child said " + l + ", not " + what);
        }
    }

    private static void report(String mode, long[] rtt, int warmup) {
        System.out.printf(Locale.ROOT, "%-6s write_lat 8 B: t_typical %.2f us (median RTT/2), p99 %.2f us, %d iters%n",
                mode, medianHalfUs(rtt, warmup), p99HalfUs(rtt, warmup), rtt.length - warmup);
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).strip();
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}

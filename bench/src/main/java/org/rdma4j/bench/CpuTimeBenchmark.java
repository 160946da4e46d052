// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The single-thread in-process benchmarks measured in the posting thread's CPU time per operation
 * ({@link ThreadMXBean#getCurrentThreadCpuTime()}) as well as wall time: on a machine shared with
 * other work, wall time measures mostly the scheduler, while the thread's own CPU time stays close to
 * what the operation costs. A main class, not JMH (JMH cannot report CPU time per operation), for the
 * same loops as the JMH benchmarks:
 * <ul>
 *   <li>{@code lat}: {@link RdmaWriteLatencyBenchmark#writeSignaled} (8 bytes, inline, signaled, polled
 *       to its completion);</li>
 *   <li>{@code rate}: {@link RdmaWriteRateBenchmark} (8-byte inline WRITEs, 128 in flight, every 64th
 *       signaled);</li>
 *   <li>{@code send}: one 8-byte inline signaled SEND into a posted receive, polled to both completions
 *       (the send CQ, then the receive CQ) and the receive re-posted: the one-thread part of
 *       {@link SendRecvLatencyBenchmark}'s half round trip;</li>
 *   <li>{@code bw SIZE}: {@link BaselineBenchmark#memcpy} and {@link RdmaWriteBandwidthBenchmark} of
 *       SIZE bytes (16 in flight, every 8th signaled), one after the other in the same JVM.</li>
 * </ul>
 * Each test runs twice per round (the first pass warms up and is not printed). Each line also gives
 * what the posting thread allocated per operation (the data path must allocate nothing; this count,
 * unlike JMH's {@code gc.alloc.rate.norm}, excludes the JVM's other threads).
 * {@snippet :
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.rdma4j.bench.CpuTimeBenchmark lat 3
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.rdma4j.bench.CpuTimeBenchmark bw 3 65536
 * }
 */
public final class CpuTimeBenchmark {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** The posting thread's allocation counter (HotSpot's ThreadMXBean). */
    private static final com.sun.management.ThreadMXBean ALLOC =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static long allocated0;

    private CpuTimeBenchmark() {}

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: CpuTimeBenchmark lat|rate|send|bw [rounds] [size]");
            System.exit(2);
        }
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        for (int r = 0; r < rounds; r++) {
            switch (args[0]) {
                case "lat" -> latency();
                case "rate" -> rate();
                case "send" -> send();
                case "bw" -> bandwidth(args.length > 2 ? Integer.parseInt(args[2]) : 65536);
                default -> throw new IllegalArgumentException("unknown test " + args[0]);
            }
        }
    }

    private static void report(String name, long ops, long cpu0, long wall0) {
        long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
        long wall = System.nanoTime() - wall0;
        long bytes = ALLOC.getCurrentThreadAllocatedBytes() - allocated0;
        System.out.printf("%-16s cpu %8.1f ns/op   wall %8.1f ns/op   thread allocation %.4f B/op%n", name,
                (double) cpu / ops, (double) wall / ops, (double) bytes / ops);
    }

    /** Starts a measured pass: the time and allocation counters {@link #report} subtracts. */
    private static long start() {
        allocated0 = ALLOC.getCurrentThreadAllocatedBytes();
        return THREADS.getCurrentThreadCpuTime();
    }

    private static void pollOne(org.rdma4j.verbs.CompletionQueue cq, WorkCompletion[] wc) {
        long end = System.nanoTime() + 10_000_000_000L;
        while (cq.poll(wc, 1) == 0) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("no completion within 10 s");
            }
            Thread.onSpinWait();
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("WRITE failed: " + wc[0]);
        }
    }

    private static void latency() {
        try (SoftPair p = new SoftPair(4096, 16, 1)) {
            SendWorkRequest w = new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED | SendFlag.INLINE)
                    .sge(p.a.mr, 64, 8).write(p.b.mr.address(), p.b.mr.rkey());
            WorkCompletion[] wc = WorkCompletion.array(1);
            int n = 1_000_000;
            for (int pass = 0; pass < 2; pass++) {
                long c0 = start();
                long w0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    p.a.qp.postSend(w);
                    pollOne(p.a.sendCq, wc);
                }
                if (pass == 1) {
                    report("writeSignaled", n, c0, w0);
                }
            }
        }
    }

    private static void send() {
        try (SoftPair p = new SoftPair(4096, 16, 16)) {
            SendWorkRequest w = new SendWorkRequest().wrId(1).opcode(org.rdma4j.verbs.WrOpcode.SEND)
                    .flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(p.a.mr, 1024, 8);
            org.rdma4j.verbs.RecvWorkRequest r = new org.rdma4j.verbs.RecvWorkRequest().wrId(2).sge(p.b.mr, 0, 64);
            for (int i = 0; i < 16; i++) {
                p.b.qp.postRecv(r);
            }
            WorkCompletion[] wc = WorkCompletion.array(1);
            int n = 1_000_000;
            for (int pass = 0; pass < 2; pass++) {
                long c0 = start();
                long w0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    p.a.qp.postSend(w);
                    pollOne(p.a.sendCq, wc);
                    pollOne(p.b.recvCq, wc);
                    p.b.qp.postRecv(r);
                }
                if (pass == 1) {
                    report("sendRecv", n, c0, w0);
                }
            }
        }
    }

    private static void rate() {
        int depth = 128;
        int every = 64;
        try (SoftPair p = new SoftPair(4096, depth, 1)) {
            SendWorkRequest w = new SendWorkRequest().wrId(1).sge(p.a.mr, 64, 8).write(p.b.mr.address(), p.b.mr.rkey());
            WorkCompletion[] wc = WorkCompletion.array(depth / every + 1);
            int n = 4_000_000;
            for (int pass = 0; pass < 2; pass++) {
                long c0 = start();
                long w0 = System.nanoTime();
                stream(p, w, wc, n, depth, every, SendFlag.INLINE);
                if (pass == 1) {
                    report("rate8", n, c0, w0);
                }
            }
        }
    }

    private static void bandwidth(int size) {
        try (SoftPair p = new SoftPair(size, 64, 1); Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(size, 4096);
            MemorySegment dst = arena.allocate(size, 4096);
            SendWorkRequest w = new SendWorkRequest().wrId(1).sge(p.a.mr, 0, size).write(p.b.mr.address(), p.b.mr.rkey());
            WorkCompletion[] wc = WorkCompletion.array(4);
            int n = (int) Math.max(2000, 2_000_000_000L / size);
            for (int pass = 0; pass < 2; pass++) {
                long c0 = start();
                long w0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    MemorySegment.copy(src, 0, dst, 0, size);
                }
                if (pass == 1) {
                    report("memcpy" + size, n, c0, w0);
                }
                c0 = start();
                w0 = System.nanoTime();
                stream(p, w, wc, n, 16, 8, 0);
                if (pass == 1) {
                    report("write" + size, n, c0, w0);
                }
            }
        }
    }

    /** Posts {@code n} WRITEs, at most {@code depth} in flight, every {@code every}th signaled; drains. */
    private static void stream(SoftPair p, SendWorkRequest w, WorkCompletion[] wc, int n, int depth, int every,
                               int flags) {
        long posted = 0;
        long completed = 0;
        for (int i = 0; i < n; i++) {
            while (posted - completed >= depth) {
                completed += (long) every * reap(p, wc);
            }
            posted++;
            w.flags(posted % every == 0 ? flags | SendFlag.SIGNALED : flags);
            p.a.qp.postSend(w);
        }
        if (posted % every != 0) { // a signaled WRITE retires the unsignaled tail
            w.flags(flags | SendFlag.SIGNALED);
            p.a.qp.postSend(w);
            posted += every - posted % every;
        }
        while (completed < posted) {
            completed += (long) every * reap(p, wc);
        }
    }

    private static int reap(SoftPair p, WorkCompletion[] wc) {
        int k = p.a.sendCq.poll(wc);
        for (int i = 0; i < k; i++) {
            if (wc[i].status() != WcStatus.SUCCESS) {
                throw new IllegalStateException("WRITE failed: " + wc[i]);
            }
        }
        return k;
    }
}

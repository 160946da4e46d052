// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.PreparedQueuePair;

/**
 * The native provider's data path through {@code java.lang.foreign}, on a real device (rxe0 in the
 * interop VM: {@code -p device=rxe0}). Run with {@code -prof gc}: both show 0 B/op when post and poll
 * allocate nothing.
 * <ul>
 *   <li>{@link #pollEmptyCq}: {@code poll_cq} through the context's ops on a CQ with nothing in it, the
 *       cost of one call into the provider and back.</li>
 *   <li>{@link #writeAndPoll}: an 8-byte inline signaled RDMA WRITE from an RC QP to itself, polled to
 *       its completion: post_send, the device's work, poll_cq.</li>
 * </ul>
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class NativeDataPathBenchmark {
    @Param("rxe0")
    public String device;
    @Param("-1")
    public int gidIndex;

    private Arena arena;
    private Context ctx;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    private CompletionQueue emptyCq;
    private CompletionQueue cq;
    private QueuePair qp;
    private SendWorkRequest write;
    private final WorkCompletion[] wcs = WorkCompletion.array(16);

    @Setup
    public void open() {
        ctx = Verbs.device(device).open();
        pd = ctx.allocPd();
        arena = Arena.ofShared();
        mr = pd.regMr(arena.allocate(4096, 4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
        emptyCq = ctx.createCq(64);
        cq = ctx.createCq(64);
        var builder = pd.queuePair(QpType.RC, cq).cap(new QpCap(16, 16, 1, 1, 64));
        if (gidIndex >= 0) {
            builder.gidIndex(gidIndex);
        }
        PreparedQueuePair p = builder.prepare();
        qp = p.handshake(p.endpoint()); // connected to itself
        write = new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(mr, 0, 8)
                .write(mr.address() + 64, mr.rkey());
    }

    @Benchmark
    public int pollEmptyCq() {
        return emptyCq.poll(wcs);
    }

    @Benchmark
    public int writeAndPoll() {
        qp.postSend(write);
        int n;
        while ((n = cq.poll(wcs, 1)) == 0) {
            Thread.onSpinWait();
        }
        if (wcs[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("completion " + wcs[0]);
        }
        return n;
    }

    @TearDown
    public void close() {
        qp.close();
        cq.close();
        emptyCq.close();
        mr.close();
        pd.close();
        ctx.close();
        arena.close();
    }

    /**
     * The allocation of the data path on the calling thread alone (JMH's {@code gc.alloc.rate.norm}
     * divides what every thread of the JVM allocates, its own included, by the operations: at a few
     * thousand WRITEs a second under emulation that background is tens of bytes per operation).
     * Prints one line per operation with its bytes per operation; exits 1 if either allocates.
     * {@code java -cp benchmarks.jar org.rdma4j.bench.NativeDataPathBenchmark <device> <gidIndex>}
     */
    public static void main(String[] args) {
        NativeDataPathBenchmark b = new NativeDataPathBenchmark();
        b.device = args.length > 0 ? args[0] : "rxe0";
        b.gidIndex = args.length > 1 ? Integer.parseInt(args[1]) : -1;
        b.open();
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        boolean allocates = false;
        try {
            for (String op : new String[] {"pollEmptyCq", "writeAndPoll"}) {
                int warm = op.equals("pollEmptyCq") ? 200_000 : 20_000;
                int n = op.equals("pollEmptyCq") ? 1_000_000 : 20_000;
                for (int i = 0; i < warm; i++) {
                    run(b, op);
                }
                long before = mx.getCurrentThreadAllocatedBytes();
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    run(b, op);
                }
                long ns = System.nanoTime() - t0;
                long bytes = mx.getCurrentThreadAllocatedBytes() - before;
                System.out.printf(java.util.Locale.ROOT, "alloc-check %s: %d B in %d ops = %.4f B/op (%.0f ns/op)%n",
                        op, bytes, n, (double) bytes / n, (double) ns / n);
                allocates |= bytes > 0;
            }
        } finally {
            b.close();
        }
        System.exit(allocates ? 1 : 0);
    }

    private static void run(NativeDataPathBenchmark b, String op) {
        if (op.equals("pollEmptyCq")) {
            b.pollEmptyCq();
        } else {
            b.writeAndPoll();
        }
    }
}

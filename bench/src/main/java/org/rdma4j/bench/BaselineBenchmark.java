// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the hardware gives before any RDMA code runs, measured in the same run as the RDMA benchmarks
 * so the ratios in docs/PERFORMANCE.md compare like with like:
 * <ul>
 *   <li>{@link #spinRoundTrip}: two threads ping-pong a counter through two cache lines (release
 *       store, acquire spin), the floor for any two-thread round trip, ours included. The pong side is
 *       a background thread, exactly as in {@link RdmaWriteLatencyBenchmark#pingPong}.</li>
 *   <li>{@link #memcpy}: {@code MemorySegment.copy} between two native segments, the floor for an
 *       RDMA WRITE stream (the soft device copies each payload byte once, into the target MR).</li>
 * </ul>
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class BaselineBenchmark {

    /** Two counters 128 bytes apart (no false sharing, not even with the adjacent-line prefetcher). */
    @State(Scope.Benchmark)
    public static class Spin {
        private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
        private static final int PING = 16;
        private static final int PONG = 32;
        private final long[] cells = new long[48];
        private long seq;
        private volatile boolean running;
        private Thread ponger;

        @Setup(Level.Trial)
        public void start() {
            running = true;
            ponger = Thread.ofPlatform().daemon().name("bench-spin-pong").start(this::pong);
            SoftPair.check(roundTrip() == 1, "spin round trip");
        }

        private void pong() {
            long last = 0;
            int spins = 0;
            while (running) {
                long v = (long) CELL.getAcquire(cells, PING);
                if (v != last) {
                    last = v;
                    spins = 0;
                    CELL.setRelease(cells, PONG, v);
                } else {
                    spins = Backoff.idle(spins);
                }
            }
        }

        long roundTrip() {
            long n = ++seq;
            CELL.setRelease(cells, PING, n);
            int spins = 0;
            while ((long) CELL.getAcquire(cells, PONG) != n) {
                spins = Backoff.idle(spins);
            }
            return n;
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            running = false;
            ponger.join();
            SoftPair.check((long) CELL.getAcquire(cells, PONG) == seq, "pong echoed the last ping");
        }
    }

    /** Two page-aligned native segments. */
    @State(Scope.Thread)
    public static class Copy {
        @Param({"4096", "65536", "1048576"})
        public int size;
        private Arena arena;
        MemorySegment src;
        MemorySegment dst;

        @Setup(Level.Trial)
        public void allocate() {
            arena = Arena.ofShared();
            src = arena.allocate(size, 4096);
            dst = arena.allocate(size, 4096);
            for (int i = 0; i < size; i += 8) {
                src.set(java.lang.foreign.ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            MemorySegment.copy(src, 0, dst, 0, size);
            SoftPair.check(src.mismatch(dst) == -1, "memcpy copied");
        }

        @TearDown(Level.Trial)
        public void free() {
            SoftPair.check(src.mismatch(dst) == -1, "memcpy copied");
            arena.close();
        }
    }

    /** Bytes moved, reported as a rate (bytes/s) next to the primary score (copies/s). */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void clear() {
            bytes = 0;
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public long spinRoundTrip(Spin s) {
        return s.roundTrip();
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void memcpy(Copy c, Bytes b) {
        MemorySegment.copy(c.src, 0, c.dst, 0, c.size);
        b.bytes += c.size;
    }
}

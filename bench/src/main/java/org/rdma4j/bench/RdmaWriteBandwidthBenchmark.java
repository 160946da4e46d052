// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.ValueLayout;
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
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * An RDMA WRITE stream in the manner of {@code ib_write_bw}: one RC QP from {@code soft0} to a second
 * soft device (path MTU 4096), at most {@value #OUTSTANDING} WRITEs of {@code size} bytes in flight,
 * every {@value #SIGNAL_EVERY}th signaled, the CQ polled when the window is full. Every WRITE targets
 * the same {@code size} bytes of the remote MR, from the same local bytes. One operation = one posted
 * WRITE; the {@code bytes} counter gives the rate in bytes/s (compare with
 * {@link BaselineBenchmark#memcpy} of the same size).
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RdmaWriteBandwidthBenchmark {
    static final int OUTSTANDING = 16;
    static final int SIGNAL_EVERY = 8;

    @State(Scope.Thread)
    public static class Stream {
        @Param({"4096", "65536", "1048576"})
        public int size;
        SoftPair pair;
        SendWorkRequest write;
        final WorkCompletion[] wc = WorkCompletion.array(OUTSTANDING / SIGNAL_EVERY + 1);
        long posted;
        long completed;

        @Setup(Level.Trial)
        public void open() {
            pair = new SoftPair(size, 4 * OUTSTANDING, 1);
            write = new SendWorkRequest().wrId(0)
                    .sge(pair.a.mr, 0, size).write(pair.b.mr.address(), pair.b.mr.rkey());
            verify(1);
        }

        /**
         * Fills the source with a pattern derived from {@code round}, WRITEs it signaled after
         * everything outstanding, and checks the target holds it (so the run cannot measure nothing).
         */
        void verify(long round) {
            drain();
            for (int i = 0; i < size; i += 8) {
                pair.a.buffer.set(ValueLayout.JAVA_LONG, i, (i + 1) * 0x9E3779B97F4A7C15L * round);
            }
            write.flags(SendFlag.SIGNALED);
            pair.a.qp.postSend(write);
            SoftPair.awaitOne(pair.a.sendCq, wc);
            SoftPair.check(pair.a.buffer.asSlice(0, size).mismatch(pair.b.buffer.asSlice(0, size)) == -1,
                    size + " bytes arrived intact");
        }

        /** Polls until every signaled WRITE posted so far has completed. */
        private void drain() {
            while (completed + SIGNAL_EVERY <= posted) {
                reap();
            }
        }

        void post() {
            while (posted - completed >= OUTSTANDING) {
                reap();
            }
            posted++;
            write.flags(posted % SIGNAL_EVERY == 0 ? SendFlag.SIGNALED : 0);
            pair.a.qp.postSend(write);
        }

        private void reap() {
            int n = pair.a.sendCq.poll(wc);
            for (int i = 0; i < n; i++) {
                if (wc[i].status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("WRITE failed: " + wc[i]);
                }
            }
            completed += (long) n * SIGNAL_EVERY;
            if (n == 0) {
                Thread.onSpinWait();
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            // posted is not a multiple of SIGNAL_EVERY in general: verify()'s signaled WRITE retires the tail
            verify(posted + 2);
            SoftPair.check(pair.a.qp.state() == QpState.RTS, "QP still in RTS");
            pair.close();
        }
    }

    /** Bytes posted, reported as a rate (bytes/s) next to the primary score (WRITEs/s). */
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
    public void write(Stream s, Bytes b) {
        s.post();
        b.bytes += s.size;
    }
}

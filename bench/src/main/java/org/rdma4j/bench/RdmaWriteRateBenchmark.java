// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
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
 * The 8-byte RDMA WRITE message rate with selective signaling, as {@code ib_write_bw -s 8} measures
 * it: one RC QP from {@code soft0} to a second soft device, up to {@code depth} WRITEs in flight (send
 * queue and CQ that deep), every {@code signalEvery}th one signaled (perftest's {@code --cq-mod}),
 * {@code INLINE} (the 8 bytes are below max_inline_data, as perftest sends them), the CQ polled only
 * when the window is full. All WRITEs go to the same 8 remote bytes. One operation = one posted
 * WRITE: the score is the message rate in WRITEs per second.
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RdmaWriteRateBenchmark {
    static final int SIZE = 8;

    @State(Scope.Thread)
    public static class Stream {
        /** WRITEs in flight at most (perftest's tx depth for bandwidth tests is 128). */
        @Param({"128"})
        public int depth;
        /** Every how many WRITEs one is signaled (perftest's cq_mod; 100 there, a divisor of the depth here). */
        @Param({"64"})
        public int signalEvery;
        SoftPair pair;
        SendWorkRequest write;
        WorkCompletion[] wc;
        long posted;
        long completed;

        @Setup(Level.Trial)
        public void open() {
            if (depth % signalEvery != 0) {
                throw new IllegalArgumentException("signalEvery must divide depth");
            }
            pair = new SoftPair(4096, depth, 1);
            wc = WorkCompletion.array(depth / signalEvery + 1);
            write = new SendWorkRequest().wrId(0).sge(pair.a.mr, 0, SIZE)
                    .write(pair.b.mr.address(), pair.b.mr.rkey());
            verify(1);
        }

        /** WRITEs {@code value} signaled after everything outstanding and checks it landed. */
        void verify(long value) {
            while (completed + signalEvery <= posted) {
                reap();
            }
            pair.a.buffer.set(ValueLayout.JAVA_LONG, 0, value);
            write.flags(SendFlag.SIGNALED | SendFlag.INLINE);
            pair.a.qp.postSend(write);
            SoftPair.awaitOne(pair.a.sendCq, wc);
            SoftPair.check(pair.b.buffer.get(ValueLayout.JAVA_LONG, 0) == value, "8 bytes arrived");
        }

        void post() {
            while (posted - completed >= depth) {
                reap();
            }
            posted++;
            write.flags(posted % signalEvery == 0 ? SendFlag.SIGNALED | SendFlag.INLINE : SendFlag.INLINE);
            pair.a.qp.postSend(write);
        }

        private void reap() {
            int n = pair.a.sendCq.poll(wc);
            for (int i = 0; i < n; i++) {
                if (wc[i].status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("WRITE failed: " + wc[i]);
                }
            }
            completed += (long) n * signalEvery;
            if (n == 0) {
                Thread.onSpinWait();
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            verify(posted + 2); // its signaled WRITE also retires the unsignaled tail
            SoftPair.check(pair.a.qp.state() == QpState.RTS, "QP still in RTS");
            pair.close();
        }
    }

    @Benchmark
    public void write(Stream s) {
        s.post();
    }
}

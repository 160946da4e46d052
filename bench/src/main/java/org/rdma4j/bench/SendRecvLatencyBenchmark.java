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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * 8-byte SEND/RECV round trip in the manner of {@code ib_send_lat}: two RC QPs (soft0 and a second
 * soft device), each side keeps {@value #RECVS} receives posted and re-posts one per message; A sends
 * its counter (signaled, inline), reaps the send completion and polls its receive CQ for B's reply; B
 * (a second thread) polls its receive CQ, re-posts, and sends the value back. One operation = SEND
 * there, SEND back.
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SendRecvLatencyBenchmark {
    static final int RECVS = 16;
    /** Where receives land in each side's MR. */
    static final long RECV_AT = 0;
    /** Where sends come from. */
    static final long SEND_AT = 1024;

    @State(Scope.Benchmark)
    public static class PingPong {
        SoftPair pair;
        SendWorkRequest aSend;
        SendWorkRequest bSend;
        RecvWorkRequest aRecv;
        RecvWorkRequest bRecv;
        final WorkCompletion[] aWc = WorkCompletion.array(1);
        final WorkCompletion[] bWc = WorkCompletion.array(1);
        long seq;
        private volatile boolean running;
        private volatile Throwable pongFailure;
        private Thread ponger;

        @Setup(Level.Trial)
        public void start() {
            pair = new SoftPair(4096, 16, RECVS);
            int flags = SendFlag.SIGNALED | SendFlag.INLINE;
            aSend = new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(flags).sge(pair.a.mr, SEND_AT, 8);
            bSend = new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).flags(flags).sge(pair.b.mr, SEND_AT, 8);
            aRecv = new RecvWorkRequest().wrId(3).sge(pair.a.mr, RECV_AT, 64);
            bRecv = new RecvWorkRequest().wrId(4).sge(pair.b.mr, RECV_AT, 64);
            for (int i = 0; i < RECVS; i++) {
                pair.a.qp.postRecv(aRecv);
                pair.b.qp.postRecv(bRecv);
            }
            running = true;
            ponger = Thread.ofPlatform().daemon().name("bench-send-pong").start(this::pong);
            SoftPair.check(ping() == 1, "first round trip");
            SoftPair.check(pair.b.buffer.get(ValueLayout.JAVA_LONG, RECV_AT) == 1, "SEND landed in B's receive");
        }

        /** B: receive, re-post, send the value back. */
        private void pong() {
            try {
                int spins = 0;
                while (running) {
                    if (pair.b.recvCq.poll(bWc, 1) == 0) {
                        spins = Backoff.idle(spins);
                        continue;
                    }
                    spins = 0;
                    if (bWc[0].status() != WcStatus.SUCCESS || bWc[0].byteLen() != 8) {
                        throw new IllegalStateException("bad receive: " + bWc[0]);
                    }
                    pair.b.qp.postRecv(bRecv);
                    long v = pair.b.buffer.get(ValueLayout.JAVA_LONG, RECV_AT);
                    pair.b.buffer.set(ValueLayout.JAVA_LONG, SEND_AT, v);
                    pair.b.qp.postSend(bSend);
                    while (pair.b.sendCq.poll(bWc, 1) == 0) {
                        if (!running) {
                            return;
                        }
                        spins = Backoff.idle(spins);
                    }
                    spins = 0;
                    if (bWc[0].status() != WcStatus.SUCCESS) {
                        throw new IllegalStateException("SEND back failed: " + bWc[0]);
                    }
                }
            } catch (Throwable t) {
                pongFailure = t;
            }
        }

        long ping() {
            long n = ++seq;
            pair.a.buffer.set(ValueLayout.JAVA_LONG, SEND_AT, n);
            pair.a.qp.postSend(aSend);
            RdmaWriteLatencyBenchmark.pollOne(pair.a.sendCq, aWc);
            int spins = 0;
            while (pair.a.recvCq.poll(aWc, 1) == 0) {
                if (pongFailure != null) {
                    throw new IllegalStateException("pong thread failed", pongFailure);
                }
                spins = Backoff.idle(spins);
            }
            if (aWc[0].status() != WcStatus.SUCCESS || aWc[0].byteLen() != 8) {
                throw new IllegalStateException("bad receive: " + aWc[0]);
            }
            pair.a.qp.postRecv(aRecv);
            return pair.a.buffer.get(ValueLayout.JAVA_LONG, RECV_AT);
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            running = false;
            ponger.join();
            SoftPair.check(pongFailure == null, "pong thread: " + pongFailure);
            SoftPair.check(pair.a.buffer.get(ValueLayout.JAVA_LONG, RECV_AT) == seq, "A received the last pong");
            SoftPair.check(pair.a.qp.state() == QpState.RTS && pair.b.qp.state() == QpState.RTS, "QPs still in RTS");
            pair.close();
        }
    }

    @Benchmark
    public long pingPong(PingPong s) {
        return s.ping();
    }
}

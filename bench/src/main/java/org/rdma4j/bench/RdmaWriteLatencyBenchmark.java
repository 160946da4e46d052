// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
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
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * 8-byte RDMA WRITE latency on the in-process fabric: two RC QPs on {@code soft0} and a second soft
 * device, path MTU 4096, timeout 14, max_inline_data 64.
 * <ul>
 *   <li>{@link #pingPong}: the round trip of {@code ib_write_lat}. Each side writes an incrementing
 *       counter into the other's memory and spins on its own memory until it sees the peer's value;
 *       the pong side is a second thread. One operation = WRITE there, WRITE back: post, deliver, ACK
 *       and completion, twice. As in {@code ib_write_lat} every WRITE is signaled and the poster polls
 *       its send CQ for that completion before it waits for the peer, so the measured loop includes
 *       {@code poll_cq} and no send queue can fill up (an unsignaled stream would need a signaled WR
 *       every max_send_wr anyway; on this device the slot is freed by the ACK either way).</li>
 *   <li>{@link #writeSignaled}: one thread, no peer application: post a signaled WRITE and poll the
 *       CQ until its completion (post, deliver, ACK, completion: half of the round trip above, without
 *       the cross-thread hand-off).</li>
 * </ul>
 * {@code inline=true} sends the 8 bytes with {@link SendFlag#INLINE} (copied at post time, as
 * {@code ib_write_lat} does below its inline size); {@code inline=false} gathers them from the MR.
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RdmaWriteLatencyBenchmark {
    /** Offset of the 8 bytes the peer writes into (in the receiving side's MR). */
    static final long LANDING = 0;
    /** Offset of the 8 bytes a side sends from (in its own MR). */
    static final long STAGING = 64;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    /** A connected pair plus one reusable WRITE request per direction. */
    @State(Scope.Benchmark)
    public static class Pair {
        @Param({"true", "false"})
        public boolean inline;
        SoftPair pair;
        SendWorkRequest aToB;
        SendWorkRequest bToA;
        final WorkCompletion[] wcA = WorkCompletion.array(1);
        final WorkCompletion[] wcB = WorkCompletion.array(1);
        long seq;

        void open() {
            pair = new SoftPair(4096, 16, 1);
            int flags = SendFlag.SIGNALED | (inline ? SendFlag.INLINE : 0);
            aToB = new SendWorkRequest().wrId(1).flags(flags)
                    .sge(pair.a.mr, STAGING, 8).write(pair.b.mr.address() + LANDING, pair.b.mr.rkey());
            bToA = new SendWorkRequest().wrId(2).flags(flags)
                    .sge(pair.b.mr, STAGING, 8).write(pair.a.mr.address() + LANDING, pair.a.mr.rkey());
        }

        void close() {
            SoftPair.check(pair.a.qp.state() == QpState.RTS && pair.b.qp.state() == QpState.RTS, "QPs still in RTS");
            pair.close();
        }
    }

    /** {@link Pair} with the pong thread running. */
    @State(Scope.Benchmark)
    public static class PingPong extends Pair {
        private volatile boolean running;
        private volatile Throwable pongFailure;
        private Thread ponger;

        @Setup(Level.Trial)
        public void start() {
            open();
            running = true;
            ponger = Thread.ofPlatform().daemon().name("bench-write-pong").start(this::pong);
            SoftPair.check(ping() == 1, "first round trip");
            SoftPair.check(pair.b.buffer.get(ValueLayout.JAVA_LONG, LANDING) == 1, "ping landed in B's memory");
        }

        /** B: wait for A's value to land, write it back. */
        private void pong() {
            try {
                long last = 0;
                int spins = 0;
                while (running) {
                    long v = (long) LONG.getAcquire(pair.b.buffer, LANDING);
                    if (v == last) {
                        spins = Backoff.idle(spins);
                        continue;
                    }
                    last = v;
                    spins = 0;
                    pair.b.buffer.set(ValueLayout.JAVA_LONG, STAGING, v);
                    pair.b.qp.postSend(bToA);
                    while (pair.b.sendCq.poll(wcB, 1) == 0) {
                        if (!running) {
                            return;
                        }
                        spins = Backoff.idle(spins);
                    }
                    spins = 0;
                    if (wcB[0].status() != WcStatus.SUCCESS) {
                        throw new IllegalStateException("WRITE back failed: " + wcB[0]);
                    }
                }
            } catch (Throwable t) {
                pongFailure = t;
            }
        }

        /** A: write {@code ++seq} to B, reap the completion, spin until B's copy comes back. */
        long ping() {
            long n = ++seq;
            pair.a.buffer.set(ValueLayout.JAVA_LONG, STAGING, n);
            pair.a.qp.postSend(aToB);
            pollOne(pair.a.sendCq, wcA);
            int spins = 0;
            while ((long) LONG.getAcquire(pair.a.buffer, LANDING) != n) {
                if (pongFailure != null) {
                    throw new IllegalStateException("pong thread failed", pongFailure);
                }
                spins = Backoff.idle(spins);
            }
            return n;
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            running = false;
            ponger.join();
            SoftPair.check(pongFailure == null, "pong thread: " + pongFailure);
            SoftPair.check(pair.b.buffer.get(ValueLayout.JAVA_LONG, LANDING) == seq, "B holds the last ping");
            SoftPair.check(pair.a.buffer.get(ValueLayout.JAVA_LONG, LANDING) == seq, "A holds the last pong");
            close();
        }
    }

    /** {@link Pair} with nobody on B: one-sided WRITEs from A. */
    @State(Scope.Benchmark)
    public static class OneWay extends Pair {
        @Setup(Level.Trial)
        public void start() {
            open();
            SoftPair.check(write() == 1, "first write");
            SoftPair.check(pair.b.buffer.get(ValueLayout.JAVA_LONG, LANDING) == 1, "write landed in B's memory");
        }

        long write() {
            long n = ++seq;
            pair.a.buffer.set(ValueLayout.JAVA_LONG, STAGING, n);
            pair.a.qp.postSend(aToB);
            pollOne(pair.a.sendCq, wcA);
            return n;
        }

        @TearDown(Level.Trial)
        public void stop() {
            SoftPair.check(pair.b.buffer.get(ValueLayout.JAVA_LONG, LANDING) == seq, "B holds the last write");
            close();
        }
    }

    /** Data-path poll: spins until one completion, which must be a success. */
    static void pollOne(CompletionQueue cq, WorkCompletion[] wc) {
        int spins = 0;
        while (cq.poll(wc, 1) == 0) {
            spins = Backoff.idle(spins);
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("WRITE failed: " + wc[0]);
        }
    }

    @Benchmark
    public long pingPong(PingPong s) {
        return s.ping();
    }

    @Benchmark
    public long writeSignaled(OneWay s) {
        return s.write();
    }
}

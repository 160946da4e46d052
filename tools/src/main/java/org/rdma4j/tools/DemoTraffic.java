// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.tools.DemoCommand.DataPathFailure;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The demo's traffic: a ping-pong of 8-byte RDMA WRITEs (the pong side on a second thread), SEND/RECV
 * round trips, and a stream of 64 KiB RDMA WRITEs, each printing its figures. The tour's two QPs share
 * one CQ, so whoever polls it credits each completion to the QP it belongs to. Figures are a
 * demonstration, not a benchmark (that is the JMH suite in {@code bench/}). Not thread safe: one
 * section at a time, from the tour's thread.
 */
final class DemoTraffic {
    /** Offsets into each half of the tour's MR (A's half at 0, B's at {@code bHalf}). */
    private static final long PING_PONG_OFFSET = 4096;
    private static final long SEND_RECV_OFFSET = 8192;
    private static final long BANDWIDTH_OFFSET = 64 * 1024;
    /** Destination slots of the bandwidth stream in B's half. */
    private static final int BANDWIDTH_SLOTS = 4;
    /** Every how many unsignaled ping-pong writes one is signaled (the SQ holds twice as many). */
    private static final int SIGNAL_EVERY = 8;
    /** No sign of progress for this long means the data path is stuck. */
    private static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** Spin iterations between two looks at the CQ and the clock while waiting on memory. */
    private static final int SPINS_PER_CHECK = 1024;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final DemoCommand.Tour t;
    private final PrintWriter out;
    private final MemorySegment m;
    private final long bHalf;
    private final int sqDepth;

    DemoTraffic(DemoCommand.Tour tour, PrintWriter out, long bHalf) {
        this.t = tour;
        this.out = out;
        this.m = tour.mr.segment();
        this.bHalf = bHalf;
        this.sqDepth = Math.min(tour.qpA.cap().maxSendWr, tour.qpB.cap().maxSendWr);
    }

    // ---------------------------------------------------------------------------------------------
    // Ping-pong: RDMA WRITE round trips, each side spinning on its own memory.

    /**
     * A writes 1 into B's memory; B, on its own thread, sees it and writes 1 back into A's; A sees
     * that, and so on. One round trip is A's post to A's seeing B's value. The writes are inline (the
     * bytes are copied at post time, so the 8-byte source can change at once) and every
     * {@value #SIGNAL_EVERY}th is signaled, which keeps each send queue from filling. Stops after
     * {@code warmup + iterations} round trips or at {@code budgetNanos}, whichever comes first.
     */
    void pingPong(int warmup, int iterations, long budgetNanos) throws DataPathFailure {
        long aInbox = PING_PONG_OFFSET;
        long bInbox = bHalf + PING_PONG_OFFSET;
        m.set(ValueLayout.JAVA_LONG, aInbox, 0);
        m.set(ValueLayout.JAVA_LONG, bInbox, 0);
        long total = (long) warmup + iterations;
        Shared shared = new Shared();
        Writer a = new Writer("A", t.qpA, PING_PONG_OFFSET + 64, bInbox, shared);
        Writer b = new Writer("B", t.qpB, bHalf + PING_PONG_OFFSET + 64, aInbox, shared);
        shared.a = a;
        shared.b = b;
        long[] rttNanos = new long[(int) total];

        Thread pong = Thread.ofPlatform().daemon().name("rdma4j-demo-pong").start(() -> {
            try {
                for (long i = 1; b.await(bInbox, i); i++) {
                    boolean last = i >= shared.last;
                    b.write(i, last);
                    if (last) {
                        break;
                    }
                }
                b.drain();
            } catch (DataPathFailure e) {
                shared.fail(e.getMessage());
            } catch (RuntimeException e) {
                shared.fail("B: " + DemoCommand.describe(e));
            }
        });
        long start = System.nanoTime();
        long done = 0;
        boolean finished = false;
        try {
            for (long i = 1; i <= total; i++) {
                long t0 = System.nanoTime();
                boolean last = i == total || t0 - start > budgetNanos;
                if (last) {
                    shared.last = i;
                }
                a.write(i, last);
                a.await(aInbox, i);
                rttNanos[(int) (i - 1)] = System.nanoTime() - t0;
                done = i;
                if (last) {
                    break;
                }
            }
            a.drain();
            finished = true;
        } catch (DataPathFailure e) {
            shared.fail(e.getMessage());
        } finally {
            if (!finished) {
                shared.stop = true; // B stops at its next look at the clock, within microseconds
            }
            join(pong);
        }
        long elapsed = System.nanoTime() - start;
        if (shared.failure.get() == null && pong.isAlive()) {
            shared.fail("B's thread did not finish");
        }
        if (shared.failure.get() != null) {
            throw new DataPathFailure(shared.failure.get());
        }
        // The figures leave out the warm-up (JIT compilation), unless the budget ran out within it.
        int from = done > warmup ? warmup : 0;
        long[] measured = Arrays.copyOfRange(rttNanos, from, (int) done);
        Arrays.sort(measured);
        int n = measured.length;
        double avg = Arrays.stream(measured).average().orElse(0);
        out.printf(Locale.ROOT,
                "   %,d round trips (after %,d to warm up) in %.2f s%s, both sides spinning on memory%n", n, from,
                elapsed / 1e9, done < total ? " (the time budget ran out)" : "");
        out.printf(Locale.ROOT, "   round trip: median %.2f us, average %.2f us (min %.2f us, p99 %.2f us)%n",
                us(measured[n / 2]), us(avg), us(measured[0]),
                us(measured[(int) Math.max(0, Math.min(n - 1, (long) Math.ceil(n * 0.99) - 1))]));
        out.printf(Locale.ROOT, "   last value seen: A holds %d, B holds %d%n", m.get(ValueLayout.JAVA_LONG, aInbox),
                m.get(ValueLayout.JAVA_LONG, bInbox));
    }

    /** What the two ping-pong threads share: the first failure, the end, and both writers. */
    private final class Shared {
        final AtomicReference<String> failure = new AtomicReference<>();
        /** Set on a failure: the other side stops waiting. */
        volatile boolean stop;
        /** The last round trip, once A knows it (before A posts it). */
        volatile long last = Long.MAX_VALUE;
        Writer a;
        Writer b;

        void fail(String what) {
            failure.compareAndSet(null, what);
        }

        /**
         * Polls the shared CQ (safe from both threads) and credits each completion to its QP: a
         * signaled write completing means every write of that QP up to it did.
         */
        void reap(WorkCompletion[] wcs) {
            int n = t.cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                Writer w = wc.qpNum() == a.qp.qpn() ? a : b;
                if (!wc.isSuccess()) {
                    fail(w.name + ": RDMA WRITE " + wc.wrId() + " completed with " + wc.status() + ": "
                            + wc.status().description());
                } else {
                    w.completedThrough.accumulateAndGet(wc.wrId(), Math::max);
                }
            }
        }
    }

    /** One side of the ping-pong: writes its counter into the peer's inbox, waits on its own. */
    private final class Writer {
        final String name;
        final QueuePair qp;
        final long outbox;
        final Shared shared;
        final SendWorkRequest wr;
        final WorkCompletion[] wcs = WorkCompletion.array(16);
        final AtomicLong completedThrough = new AtomicLong();
        long posted;
        long lastSignaled;

        Writer(String name, QueuePair qp, long outbox, long peerInbox, Shared shared) {
            this.name = name;
            this.qp = qp;
            this.outbox = outbox;
            this.shared = shared;
            this.wr = new SendWorkRequest().sge(t.mr, outbox, 8)
                    .write(t.mr.address() + peerInbox, t.mr.rkey());
        }

        void write(long value, boolean last) throws DataPathFailure {
            if (posted - completedThrough.get() >= sqDepth) {
                long since = System.nanoTime();
                while (posted - completedThrough.get() >= sqDepth) {
                    check(since, "a free send queue slot");
                    Thread.onSpinWait();
                }
            }
            m.set(ValueLayout.JAVA_LONG, outbox, value);
            boolean signaled = value % SIGNAL_EVERY == 0 || last;
            wr.wrId(value).flags(SendFlag.INLINE | (signaled ? SendFlag.SIGNALED : 0));
            try {
                qp.postSend(wr);
            } catch (RuntimeException e) {
                throw new DataPathFailure(name + ": post_send of RDMA WRITE " + value + ": "
                        + DemoCommand.describe(e));
            }
            posted = value;
            if (signaled) {
                lastSignaled = value;
            }
        }

        /**
         * Spins until the 8 bytes at {@code inbox} hold {@code value}; false if the run ended before
         * it ({@code value} is past the last round trip).
         */
        boolean await(long inbox, long value) throws DataPathFailure {
            long since = 0;
            int spins = 0;
            while ((long) LONG.getAcquire(m, inbox) != value) {
                Thread.onSpinWait();
                if (++spins == SPINS_PER_CHECK) {
                    spins = 0;
                    if (value > shared.last) {
                        return false;
                    }
                    if (since == 0) {
                        since = System.nanoTime();
                    }
                    check(since, "the peer's value " + value + " (its memory holds "
                            + (long) LONG.getAcquire(m, inbox) + ")");
                    // A slow round trip: let the peer have the CPU if the machine is short of cores.
                    Thread.yield();
                }
            }
            return true;
        }

        /** Waits for the completion of this side's last signaled write, which leaves its CQEs polled. */
        void drain() throws DataPathFailure {
            long since = System.nanoTime();
            while (completedThrough.get() < lastSignaled) {
                check(since, "the completion of RDMA WRITE " + lastSignaled);
                Thread.onSpinWait();
            }
        }

        private void check(long sinceNanos, String waitingFor) throws DataPathFailure {
            shared.reap(wcs);
            String failure = shared.failure.get();
            if (failure != null) {
                throw new DataPathFailure(failure);
            }
            if (shared.stop) {
                throw new DataPathFailure(name + ": stopped while waiting for " + waitingFor);
            }
            if (System.nanoTime() - sinceNanos > STALL_NANOS) {
                throw new DataPathFailure(name + ": nothing within " + STALL_NANOS / 1_000_000_000
                        + " s while waiting for " + waitingFor);
            }
        }
    }

    private static void join(Thread thread) {
        try {
            thread.join(TimeUnit.NANOSECONDS.toMillis(STALL_NANOS) * 2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // SEND/RECV round trips: the two-sided path, one thread driving both QPs through the shared CQ.

    /**
     * A SENDs 8 bytes to B, B's receive completes, B SENDs them back, A's receive completes: one round
     * trip. Each side reposts its receive before the peer can send again, so there is never an RNR.
     * Stops after {@code warmup + iterations} round trips or at {@code budgetNanos}.
     */
    void sendRecvRoundTrips(int warmup, int iterations, long budgetNanos) throws DataPathFailure {
        long aRecv = SEND_RECV_OFFSET;
        long bRecv = bHalf + SEND_RECV_OFFSET;
        long aSend = aRecv + 64;
        long bSend = bRecv + 64;
        RecvWorkRequest ra = new RecvWorkRequest().wrId(RECV_A).sge(t.mr, aRecv, 8);
        RecvWorkRequest rb = new RecvWorkRequest().wrId(RECV_B).sge(t.mr, bRecv, 8);
        SendWorkRequest sa = new SendWorkRequest().wrId(SEND_A).send()
                .flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(t.mr, aSend, 8);
        SendWorkRequest sb = new SendWorkRequest().wrId(SEND_B).send()
                .flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(t.mr, bSend, 8);
        Counts c = new Counts();
        postRecv(t.qpA, ra, "A");
        postRecv(t.qpB, rb, "B");
        long total = (long) warmup + iterations;
        long[] rttNanos = new long[(int) total];
        long start = System.nanoTime();
        long done = 0;
        for (long i = 1; i <= total; i++) {
            long t0 = System.nanoTime();
            if (i > 1 && t0 - start > budgetNanos) {
                break;
            }
            m.set(ValueLayout.JAVA_LONG, aSend, i);
            sendWhenRoom(c, SEND_A, sa, t.qpA);
            receive(c, RECV_B, bRecv, i);
            postRecv(t.qpB, rb, "B");
            m.set(ValueLayout.JAVA_LONG, bSend, i);
            sendWhenRoom(c, SEND_B, sb, t.qpB);
            receive(c, RECV_A, aRecv, i);
            postRecv(t.qpA, ra, "A");
            rttNanos[(int) (i - 1)] = System.nanoTime() - t0;
            done = i;
        }
        long elapsed = System.nanoTime() - start;
        // Leave the CQ empty for the next section: every SEND's completion, and one receive per QP
        // still posted (they go with the QPs at tear-down, flushed).
        long since = System.nanoTime();
        while (c.sendsDoneA < done || c.sendsDoneB < done) {
            pollOnce(c, since, "the last SEND completions", -1);
        }
        int from = done > warmup ? warmup : 0;
        long[] measured = Arrays.copyOfRange(rttNanos, from, (int) done);
        Arrays.sort(measured);
        int n = measured.length;
        double avg = Arrays.stream(measured).average().orElse(0);
        out.printf(Locale.ROOT, "   %,d round trips (after %,d to warm up) in %.2f s%s, one thread polling the CQ%n",
                n, from, elapsed / 1e9, done < total ? " (the time budget ran out)" : "");
        out.printf(Locale.ROOT, "   round trip: median %.2f us, average %.2f us (min %.2f us)%n",
                us(measured[n / 2]), us(avg), us(measured[0]));
    }

    private static final long RECV_A = 101;
    private static final long RECV_B = 102;
    private static final long SEND_A = 201;
    private static final long SEND_B = 202;

    private static final class Counts {
        long sendsPostedA;
        long sendsPostedB;
        long sendsDoneA;
        long sendsDoneB;
        long receivedA;
        long receivedB;
        final WorkCompletion[] wcs = WorkCompletion.array(16);
    }

    private void sendWhenRoom(Counts c, long which, SendWorkRequest wr, QueuePair qp) throws DataPathFailure {
        long since = System.nanoTime();
        while (which == SEND_A ? c.sendsPostedA - c.sendsDoneA >= sqDepth : c.sendsPostedB - c.sendsDoneB >= sqDepth) {
            pollOnce(c, since, "a free send queue slot", -1);
        }
        try {
            qp.postSend(wr);
        } catch (RuntimeException e) {
            throw new DataPathFailure("post_send on " + (which == SEND_A ? "A" : "B") + ": " + DemoCommand.describe(e));
        }
        if (which == SEND_A) {
            c.sendsPostedA++;
        } else {
            c.sendsPostedB++;
        }
    }

    /** Polls until the receive {@code which} completed once more, then checks the 8 bytes it got. */
    private void receive(Counts c, long which, long offset, long expected) throws DataPathFailure {
        long since = System.nanoTime();
        while (which == RECV_A ? c.receivedA < expected : c.receivedB < expected) {
            pollOnce(c, since, which == RECV_A ? "the receive on A of message " : "the receive on B of message ",
                    expected);
        }
        long got = m.get(ValueLayout.JAVA_LONG, offset);
        if (got != expected) {
            throw new DataPathFailure("SEND " + expected + " arrived as " + got);
        }
    }

    /** One poll of the CQ; fails after {@value #STALL_NANOS} ns without a completion. */
    private void pollOnce(Counts c, long sinceNanos, String waitingFor, long number) throws DataPathFailure {
        WorkCompletion[] wcs = c.wcs;
        int n = t.cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs[i];
            if (!wc.isSuccess()) {
                throw new DataPathFailure("work request " + wc.wrId() + " on QP 0x" + Integer.toHexString(wc.qpNum())
                        + " completed with " + wc.status() + ": " + wc.status().description());
            }
            if (wc.wrId() == SEND_A) {
                c.sendsDoneA++;
            } else if (wc.wrId() == SEND_B) {
                c.sendsDoneB++;
            } else if (wc.wrId() == RECV_A || wc.wrId() == RECV_B) {
                if (wc.opcode() != WcOpcode.RECV || wc.byteLen() != 8) {
                    throw new DataPathFailure("unexpected receive completion " + wc);
                }
                if (wc.wrId() == RECV_A) {
                    c.receivedA++;
                } else {
                    c.receivedB++;
                }
            } else {
                throw new DataPathFailure("unexpected completion " + wc);
            }
        }
        if (n == 0) {
            if (System.nanoTime() - sinceNanos > STALL_NANOS) {
                throw new DataPathFailure("no completion within " + STALL_NANOS / 1_000_000_000
                        + " s while waiting for " + waitingFor + (number >= 0 ? Long.toString(number) : ""));
            }
            Thread.onSpinWait();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Bandwidth: a stream of large RDMA WRITEs, a fixed number in flight.

    /**
     * Streams {@code bytes}-byte RDMA WRITEs from A's half into B's, {@code depth} in flight, until
     * {@code maxMessages} were sent or {@code maxNanos} passed. The last write carries fresh random
     * bytes into a cleared slot and is checked byte for byte.
     */
    void bandwidth(int bytes, int depth, long maxMessages, long maxNanos) throws DataPathFailure {
        long src = BANDWIDTH_OFFSET;
        long dst = bHalf + BANDWIDTH_OFFSET;
        if (dst + (long) BANDWIDTH_SLOTS * bytes > m.byteSize() || src + bytes > bHalf) {
            throw new IllegalStateException("the tour's MR is too small for the bandwidth run");
        }
        for (int j = 0; j < bytes; j += 8) {
            m.set(ValueLayout.JAVA_LONG, src + j, 0x0101010101010101L * (j / 8 % 251));
        }
        int window = Math.min(depth, sqDepth);
        SendWorkRequest wr = new SendWorkRequest().flags(SendFlag.SIGNALED).sge(t.mr, src, bytes);
        WorkCompletion[] wcs = WorkCompletion.array(window);
        long remote = t.mr.address() + dst;
        long posted = 0;
        long done = 0;
        long start = System.nanoTime();
        long lastProgress = start;
        // The stream, leaving the last message for the check below.
        while (true) {
            long now = System.nanoTime();
            boolean more = posted < maxMessages - 1 && now - start < maxNanos;
            if (!more && done == posted) {
                break;
            }
            while (more && posted - done < window) {
                wr.wrId(posted).write(remote + (posted % BANDWIDTH_SLOTS) * bytes, t.mr.rkey());
                try {
                    t.qpA.postSend(wr);
                } catch (RuntimeException e) {
                    throw new DataPathFailure("post_send of RDMA WRITE " + posted + ": " + DemoCommand.describe(e));
                }
                posted++;
                more = posted < maxMessages - 1;
            }
            int n = t.cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                if (!wcs[i].isSuccess()) {
                    throw new DataPathFailure("RDMA WRITE " + wcs[i].wrId() + " completed with " + wcs[i].status()
                            + ": " + wcs[i].status().description());
                }
            }
            done += n;
            if (n > 0) {
                lastProgress = now;
            } else if (now - lastProgress > STALL_NANOS) {
                throw new DataPathFailure("no completion within " + STALL_NANOS / 1_000_000_000 + " s; " + done
                        + " of " + posted + " RDMA WRITEs completed");
            }
        }
        // The last write: fresh bytes into a cleared slot, then compare.
        byte[] fresh = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(fresh);
        MemorySegment.copy(MemorySegment.ofArray(fresh), 0, m, src, bytes);
        m.asSlice(dst, bytes).fill((byte) 0);
        wr.wrId(posted).write(remote, t.mr.rkey());
        try {
            t.qpA.postSend(wr);
        } catch (RuntimeException e) {
            throw new DataPathFailure("post_send of the last RDMA WRITE: " + DemoCommand.describe(e));
        }
        posted++;
        WorkCompletion last = DemoCommand.await(t.cq, 1)[0];
        long elapsed = System.nanoTime() - start;
        long mismatch = m.asSlice(dst, bytes).mismatch(m.asSlice(src, bytes));
        if (mismatch >= 0) {
            throw new DataPathFailure("the last RDMA WRITE's bytes differ from offset " + mismatch + " on");
        }
        double seconds = elapsed / 1e9;
        double totalBytes = (double) posted * bytes;
        out.printf(Locale.ROOT, "   %,d RDMA WRITEs of %,d bytes, %d in flight, in %.2f s%n", posted, bytes, window,
                seconds);
        out.printf(Locale.ROOT, "   bandwidth %,.0f MB/s (%,.0f MiB/s), %,.0f messages/s%n", totalBytes / 1e6 / seconds,
                totalBytes / (1 << 20) / seconds, posted / seconds);
        out.printf(Locale.ROOT, "   the last write (fresh random bytes) arrived intact: %,d of %,d bytes match; %s%n",
                bytes, bytes, last);
    }

    // ---------------------------------------------------------------------------------------------

    private static void postRecv(QueuePair qp, RecvWorkRequest wr, String side) throws DataPathFailure {
        try {
            qp.postRecv(wr);
        } catch (RuntimeException e) {
            throw new DataPathFailure("post_recv on " + side + ": " + DemoCommand.describe(e));
        }
    }

    private static double us(double nanos) {
        return nanos / 1000.0;
    }
}

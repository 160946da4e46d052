// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import static org.rdma4j.tools.stress.StressTraffic.DEPTH;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * The active side of a two-JVM stress run ({@code rdma4j stress --bind ADDRESS SERVER}): it decides the
 * run, drives a random mix of SEND with immediate, RDMA WRITE (with and without immediate), RDMA READ,
 * FETCH_ADD and CMP_SWAP at the server's queue pairs over RoCEv2/UDP, and checks what it can see: every
 * WRITE is read back with an RDMA READ before its target slot is reused, READ data, and the atomics'
 * arithmetic. What only the server sees (the SENDs' bytes, the order of receives) it checks there; at
 * the end the client sends the per-pair hash of the receives it caused and takes the server's verdict.
 * One run per instance; not thread safe.
 */
public final class StressClient extends StressTally {
    /** Test hook: added to the hashes sent to the server, which must then report a mismatch. */
    static volatile long testHashSkew;
    /** Test hook: added to the sequence number of the READ pattern the client expects, to fail its check. */
    static volatile long testReadSkew;

    private static final int EXCHANGE_TIMEOUT_MS = 60_000;
    private static final byte FREE = 0;
    private static final byte SEND = 1;
    private static final byte WRITE = 2;
    private static final byte WRITE_IMM = 3;
    private static final byte READ = 4;
    private static final byte FETCH_ADD = 5;
    private static final byte CMP_SWAP = 6;
    /** A WRITE (or WRITE_WITH_IMM) that completed, being read back. */
    private static final byte READ_BACK = 7;
    private static final String[] KIND_NAMES = {"-", "SEND", "RDMA WRITE", "RDMA WRITE_WITH_IMM", "RDMA READ",
        "FETCH_ADD", "CMP_SWAP", "RDMA READ (of a WRITE)"};

    private final Faults faults;
    private int gidIndex = 1;
    private final long messages;
    private final long seed;
    private final int qps;
    private final int maxSize;
    private final int mtu;
    private final String host;
    private final int tcpPort;
    private final PrintWriter out;
    private final PrintWriter err;
    private final SplittableRandom random;
    private final SendWorkRequest wr = new SendWorkRequest();
    private final int[] cuts = new int[StressTraffic.MAX_SGES + 1];

    private long verified;
    private long[] fetchAddResults = new long[1024];
    private int fetchAdds;

    /** One of the client's queue pairs and the server's regions it works on. */
    private static final class Pair {
        final int index;
        QueuePair qp;
        MemorySegment local;
        MemoryRegion mrLocal;
        Control.Target target;
        final byte[] kind = new byte[DEPTH];
        final long[] seq = new long[DEPTH];
        final int[] length = new int[DEPTH];
        final int[] offset = new int[DEPTH];
        long nextSeq;
        long receives;
        long hash;
        long casValue;
        long casDone;
        int inFlight;

        Pair(int index) {
            this.index = index;
        }
    }

    public StressClient(Faults faults, long messages, long seed, int qps, int maxSize, int mtu,
                        String host, int tcpPort, PrintWriter out, PrintWriter err) {
        this.faults = faults;
        this.messages = messages;
        this.seed = seed;
        this.qps = qps;
        this.maxSize = maxSize;
        this.mtu = mtu;
        this.host = host;
        this.tcpPort = tcpPort;
        this.out = out;
        this.err = err;
        this.random = new SplittableRandom(seed);
    }

    /** Runs to the end, prints the report; the exit code (0 only if both sides found everything right). */
    public int run(DeviceOptions devices, String deviceName, int gidIndex) {
        if (devices.bindAddress() != null) {
            out.printf(Locale.ROOT, "  client: %s -> server %s, TCP port %d, UDP port %d%n",
                    devices.bindAddress().getHostAddress(), host, tcpPort, devices.udpPort());
        } else {
            out.printf(Locale.ROOT, "  client: device %s GID index %d -> server %s, TCP port %d%n", deviceName,
                    gidIndex, host, tcpPort);
        }
        out.flush();
        this.gidIndex = gidIndex;
        Device dev = devices.resolve(deviceName != null ? deviceName : "stress-client",
                faults.specOptions(seed * 31 + 1));
        try {
            return run(dev);
        } finally {
            devices.release();
        }
    }

    private int run(Device dev) {
        long start = System.nanoTime();
        Pair[] pairs = new Pair[qps];
        ArrayDeque<AutoCloseable> resources = new ArrayDeque<>();
        Control.Verdict verdict = null;
        String controlError = null;
        long retransmits = 0;
        java.util.Map<String, Long> counters;
        try (Arena arena = Arena.ofShared(); Context ctx = dev.open();
             Control ctl = Control.connect(host, tcpPort, EXCHANGE_TIMEOUT_MS)) {
            try {
                ProtectionDomain pd = push(resources, ctx.allocPd());
                CompletionQueue cq = push(resources, ctx.createCq(qps * DEPTH * 2 + 16));
                PreparedQueuePair[] prepared = new PreparedQueuePair[qps];
                QpEndpoint[] endpoints = new QpEndpoint[qps];
                for (int i = 0; i < qps; i++) {
                    Pair p = new Pair(i);
                    pairs[i] = p;
                    p.qp = push(resources, pd.createQp(new QpInitAttr(QpType.RC, cq, cq)
                            .cap(new QpCap(DEPTH, 1, StressTraffic.MAX_SGES, StressTraffic.MAX_SGES, 0))));
                    p.local = arena.allocate((long) maxSize * DEPTH, 8);
                    p.mrLocal = push(resources, pd.regMr(p.local, StressTraffic.ALL_ACCESS));
                    prepared[i] = StressTraffic.prepare(p.qp, mtu, gidIndex);
                    endpoints[i] = prepared[i].endpoint();
                }
                Control.Reply reply;
                try {
                    ctl.sendHello(new Control.Hello(messages, seed, qps, maxSize, mtu, endpoints));
                    reply = ctl.readReply(qps);
                } catch (Control.Failure f) {
                    return fail(err, f.getMessage()); // nothing has run yet: no report
                }
                for (int i = 0; i < qps; i++) {
                    Control.Target t = reply.targets()[i];
                    pairs[i].target = t;
                    prepared[i].handshake(t.endpoint());
                }
                // The server sends nothing until its verdict: a read that ends early means it went away.
                ctl.timeout(0);
                CompletableFuture<Control.Verdict> verdictF = new CompletableFuture<>();
                Thread.ofPlatform().daemon().name("rdma4j-stress-control").start(() -> {
                    try {
                        verdictF.complete(ctl.readVerdict());
                    } catch (Control.Failure f) {
                        verdictF.completeExceptionally(f);
                    }
                });
                drive(ctx, cq, pairs, reply, ctl, verdictF, start);
                retransmits = ctx.counters(1).getOrDefault("retransmits", 0L);
                Arrays.sort(fetchAddResults, 0, fetchAdds);
                for (int i = 0; i < fetchAdds; i++) {
                    if (fetchAddResults[i] != StressTraffic.COUNTER_START + i) {
                        dataError("FETCH_ADD results are not a serial order: position " + i + " has "
                                + fetchAddResults[i]);
                        break;
                    }
                }
                long[] receives = new long[qps];
                long[] hashes = new long[qps];
                long[] cas = new long[qps];
                for (Pair p : pairs) {
                    receives[p.index] = p.receives;
                    hashes[p.index] = p.hash + testHashSkew;
                    cas[p.index] = StressTraffic.casStart(p.index) + p.casDone;
                }
                if (!verdictF.isDone()) {
                    ctl.sendEnd(new Control.End(verified, dataErrors, duplicates, errorCompletions, retransmits,
                            fetchAdds, firstError != null ? firstError : "", receives, hashes, cas));
                }
                verdict = awaitVerdict(verdictF, ctl);
            } catch (Control.Failure f) {
                controlError = f.getMessage();
            } finally {
                closeAll(resources);
            }
            counters = ctx.counters(1);
        } catch (Control.Failure f) {
            return fail(err, f.getMessage());
        }
        if (controlError != null) {
            error(controlError);
        }
        return report(verdict, retransmits, counters, System.nanoTime() - start);
    }

    private void drive(Context ctx, CompletionQueue cq, Pair[] pairs, Control.Reply reply, Control ctl,
                       CompletableFuture<Control.Verdict> verdictF, long start) throws Control.Failure {
        WorkCompletion[] wcs = WorkCompletion.array(32);
        long posted = 0;
        long lastReport = System.nanoTime();
        progressClock(lastReport);
        int idle = 0;
        while (verified < messages && firstError == null) {
            for (Pair p : pairs) {
                while (posted < messages && p.inFlight < DEPTH && post(p, reply)) {
                    posted++;
                }
            }
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                completion(pairs, wcs[i]);
            }
            long now = System.nanoTime();
            if (stalled(verified, messages, now)) {
                break;
            }
            if (verdictF.isDone()) {
                error("the server ended the run early: " + earlyEnd(verdictF));
                break;
            }
            idle = StressTraffic.idle(idle, n);
            if (now - lastReport > 1_000_000_000L) {
                lastReport = now;
                ctl.sendProgress(verified);
                out.printf(Locale.ROOT, "  %d/%d verified (%.1f%%), %d retransmits, %.1f s%n", verified, messages,
                        100.0 * verified / messages, ctx.counters(1).getOrDefault("retransmits", 0L), (now - start) / 1e9);
                out.flush();
            }
        }
    }

    private static String earlyEnd(CompletableFuture<Control.Verdict> f) {
        try {
            Control.Verdict v = f.getNow(null);
            return v == null ? "?" : v.firstError().isEmpty() ? v.describe() : v.firstError();
        } catch (java.util.concurrent.CompletionException e) {
            return e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
        }
    }

    private static Control.Verdict awaitVerdict(CompletableFuture<Control.Verdict> f, Control ctl)
            throws Control.Failure {
        try {
            return f.get(StressTraffic.STALL_NANOS, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            ctl.close();
            throw new Control.Failure("the server sent no verdict within 60 s");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Control.Failure cf ? cf : new Control.Failure(String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Control.Failure("interrupted while waiting for the server's verdict");
        }
    }

    private boolean post(Pair p, Control.Reply reply) {
        int slot = -1;
        for (int i = 0; i < DEPTH; i++) {
            if (p.kind[i] == FREE) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            return false;
        }
        byte kind = (byte) (SEND + random.nextInt(CMP_SWAP));
        int len = kind == FETCH_ADD || kind == CMP_SWAP ? 8 : randomLength();
        long seq = p.nextSeq++;
        long base = (long) slot * maxSize;
        Control.Target t = p.target;
        wr.clear().wrId(((long) p.index << 32) | slot).flags(SendFlag.SIGNALED);
        int offset = 0;
        switch (kind) {
            case SEND, WRITE, WRITE_IMM -> {
                for (int j = 0; j < len; j++) {
                    p.local.set(ValueLayout.JAVA_BYTE, base + j, StressTraffic.pattern(seq, j));
                }
                gather(p, base, len);
                if (kind == SEND) {
                    wr.opcode(WrOpcode.SEND_WITH_IMM).immData((int) seq);
                } else {
                    wr.opcode(kind == WRITE ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_WRITE_WITH_IMM).immData((int) seq)
                            .rdma(t.targetAddr() + base, t.targetRkey());
                }
                if (kind != WRITE) {
                    p.receives++;
                    p.hash = StressTraffic.fold(p.hash, seq, len, kind == WRITE_IMM);
                }
            }
            case READ -> {
                p.local.asSlice(base, len).fill((byte) 0);
                offset = len == maxSize ? 0 : random.nextInt(maxSize - len + 1);
                gather(p, base, len);
                wr.opcode(WrOpcode.RDMA_READ).rdma(t.readAddr() + offset, t.readRkey());
            }
            case FETCH_ADD -> wr.fetchAdd(reply.counterAddr(), reply.counterRkey(), 1).sge(p.mrLocal, base, 8);
            default -> {
                long expect = StressTraffic.casStart(p.index) + p.casValue;
                wr.compareAndSwap(t.casAddr(), t.casRkey(), expect, expect + 1).sge(p.mrLocal, base, 8);
                p.casValue++;
            }
        }
        p.kind[slot] = kind;
        p.seq[slot] = seq;
        p.length[slot] = len;
        p.offset[slot] = offset;
        p.inFlight++;
        p.qp.postSend(wr);
        return true;
    }

    private void gather(Pair p, long base, int len) {
        int pieces = StressTraffic.split(random, len, cuts);
        for (int i = 0; i < pieces; i++) {
            wr.sge(p.mrLocal, base + cuts[i], cuts[i + 1] - cuts[i]);
        }
    }

    private int randomLength() {
        return StressTraffic.randomLength(random, maxSize, mtu);
    }

    private void completion(Pair[] pairs, WorkCompletion wc) {
        Pair p = pairs[(int) (wc.wrId() >>> 32)];
        int slot = (int) wc.wrId();
        byte kind = p.kind[slot];
        if (wc.status() != WcStatus.SUCCESS) {
            release(p, slot);
            errorCompletions++;
            error("QP " + p.index + " " + KIND_NAMES[kind] + " seq " + p.seq[slot] + " completed with " + wc.status());
            return;
        }
        long base = (long) slot * maxSize;
        long seq = p.seq[slot];
        int len = p.length[slot];
        switch (kind) {
            case SEND -> verified++;
            case WRITE, WRITE_IMM -> {
                // Placement, end to end: read the target bytes back into zeroed memory; the slot (and so the
                // target slot) stays taken until they are checked.
                p.local.asSlice(base, len).fill((byte) 0);
                wr.clear().wrId(wc.wrId()).flags(SendFlag.SIGNALED);
                gather(p, base, len);
                wr.opcode(WrOpcode.RDMA_READ).rdma(p.target.targetAddr() + base, p.target.targetRkey());
                p.kind[slot] = READ_BACK;
                p.qp.postSend(wr);
                return;
            }
            case READ_BACK -> {
                if (StressTraffic.matches(p.local, base, seq, 0, len)) {
                    verified++;
                } else {
                    dataError("RDMA WRITE seq " + seq + " on QP " + p.index + " reads back wrong");
                }
            }
            case READ -> {
                long readSeq = StressTraffic.readSourceSeq(p.index) + testReadSkew;
                if (StressTraffic.matches(p.local, base, readSeq, p.offset[slot], len)) {
                    verified++;
                } else {
                    dataError("RDMA READ data wrong on QP " + p.index + " seq " + seq);
                }
            }
            case FETCH_ADD -> {
                if (fetchAdds == fetchAddResults.length) {
                    fetchAddResults = Arrays.copyOf(fetchAddResults, fetchAdds * 2);
                }
                fetchAddResults[fetchAdds++] = p.local.get(ValueLayout.JAVA_LONG, base);
                verified++;
            }
            case CMP_SWAP -> {
                // Each CAS of this QP expects the value the previous one wrote: all must have matched.
                long got = p.local.get(ValueLayout.JAVA_LONG, base);
                long want = StressTraffic.casStart(p.index) + p.casDone;
                if (got == want) {
                    p.casDone++;
                    verified++;
                } else if (got < want) {
                    duplicates++;
                    error("CMP_SWAP on QP " + p.index + " saw an old value: executed twice?");
                } else {
                    dataError("CMP_SWAP on QP " + p.index + " returned " + got + ", expected " + want);
                }
            }
            default -> dataError("completion for an empty slot on QP " + p.index);
        }
        release(p, slot);
    }

    private static void release(Pair p, int slot) {
        if (p.kind[slot] != FREE) {
            p.kind[slot] = FREE;
            p.inFlight--;
        }
    }

    private int report(Control.Verdict v, long retransmits, java.util.Map<String, Long> counters,
                       long elapsedNanos) {
        double seconds = elapsedNanos / 1e9;
        out.printf(Locale.ROOT, "elapsed %.2f s, %.0f messages/s%n", seconds, verified / Math.max(seconds, 1e-9));
        printDevice(out, "client", counters);
        long totalData = dataErrors;
        long totalDup = duplicates;
        long totalRetransmits = retransmits;
        boolean ok = verified == messages && dataErrors == 0 && duplicates == 0 && errorCompletions == 0
                && firstError == null;
        if (v != null) {
            out.println("server: " + v.describe());
            totalData += v.dataErrors() + v.orderErrors();
            totalDup += v.duplicates();
            totalRetransmits += v.retransmits();
            ok &= v.ok();
            if (!v.firstError().isEmpty()) {
                out.println("server's first error: " + v.firstError());
            }
        } else {
            ok = false;
            out.println("server: no verdict");
        }
        if (!ok) {
            out.printf(Locale.ROOT, "first error: %s%n", firstError != null ? firstError
                    : v != null && !v.ok() ? "the server's checks failed"
                    : "verified " + verified + " of " + messages + " messages");
            if (errorCompletions > 0) {
                out.printf(Locale.ROOT, "error completions: %d%n", errorCompletions);
            }
            out.printf(Locale.ROOT, "  (to repeat: add --seed %d)%n", seed);
        }
        out.println(summary(messages, verified, totalData, totalDup, totalRetransmits));
        out.flush();
        return ok ? 0 : StressReport.EXIT_FAILED;
    }

    /**
     * Closes the queue pairs first (work requests they still hold keep memory regions busy), then the
     * rest, children before parents (the reverse of creation).
     */
    static void closeAll(ArrayDeque<AutoCloseable> resources) {
        for (AutoCloseable r : resources) {
            if (r instanceof QueuePair) {
                closeQuietly(r);
            }
        }
        while (!resources.isEmpty()) {
            closeQuietly(resources.pop());
        }
    }

    private static void closeQuietly(AutoCloseable r) {
        try {
            r.close();
        } catch (Exception e) {
            // the run has failed or is over anyway; closing the context reports whatever is left
        }
    }
}

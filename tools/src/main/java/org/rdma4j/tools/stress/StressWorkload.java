// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * A chaos run over two soft devices whose outgoing packets go through seeded fault-injecting links
 * (created from device specs: {@code soft:loopback?fabric=...&loss=...&seed=...}, or {@code soft:udp?...}
 * with {@link Config#udp()}, so the workload needs only the verbs API): several RC QP pairs carry a
 * random mix of SEND (with immediate), RDMA WRITE (with and without immediate), RDMA READ,
 * FETCH_ADD and CMP_SWAP, 0..maxSize bytes over 1..4 SGEs, and every byte, every completion, the
 * order of receives and the atomics' arithmetic are verified. Used by {@code rdma4j stress} and by
 * the property tests in tools. Not thread safe (one run per instance; runs may proceed in parallel).
 */
public final class StressWorkload extends StressTally {
    /** What to run. */
    public record Config(double loss, double reorder, double duplicate, double corrupt, long messages, long seed,
                         int qps, int maxSize, int mtu, boolean udp) {
        /** A run over the in-process fabric. */
        public Config(double loss, double reorder, double duplicate, double corrupt, long messages, long seed,
                      int qps, int maxSize, int mtu) {
            this(loss, reorder, duplicate, corrupt, messages, seed, qps, maxSize, mtu, false);
        }

        public Config {
            if (messages < 1 || qps < 1 || maxSize < 8 || Mtu.ofBytes(mtu) == null) {
                throw new IllegalArgumentException("messages >= 1, qps >= 1, max size >= 8 and an IB MTU needed");
            }
        }
    }

    /** What happened. {@code ok()} is the verdict. */
    public record Result(long messages, long delivered, long dataErrors, long duplicateExecutions,
                         long retransmits, long errorCompletions, String firstError, long elapsedNanos,
                         long lost, long duplicated, long reordered, long corrupted, Map<String, Long> counters) {
        public boolean ok() {
            return delivered == messages && dataErrors == 0 && duplicateExecutions == 0 && errorCompletions == 0;
        }

        /** The closing line of {@code rdma4j stress}. */
        public String summary() {
            return StressTally.summary(messages, delivered, dataErrors, duplicateExecutions, retransmits);
        }
    }

    /** Progress callback, called about once a second. */
    public interface Progress {
        void report(long verified, long total, long retransmits);
    }

    private static final int DEPTH = StressTraffic.DEPTH;
    private static final AtomicInteger RUNS = new AtomicInteger();

    private enum Kind { SEND, WRITE, WRITE_IMM, READ, FETCH_ADD, CMP_SWAP }

    private static final Kind[] KINDS = java.util.Arrays.stream(Kind.values())
            .filter(k -> System.getProperty("rdma4j.stress.ops", "").isEmpty()
                    || System.getProperty("rdma4j.stress.ops").contains(k.name()))
            .toArray(Kind[]::new);

    private record Expect(long seq, Kind kind, int length, int slot, int offset) {
    }

    private final Config cfg;
    private final SplittableRandom random;
    private long verified;
    private final List<Long> fetchAddResults = new ArrayList<>();

    private StressWorkload(Config cfg) {
        this.cfg = cfg;
        this.random = new SplittableRandom(cfg.seed());
    }

    /** Runs the workload to the end (or to the first transport error). */
    public static Result run(Config cfg, Progress progress) {
        return new StressWorkload(cfg).execute(progress);
    }

    private final class Pair {
        final int index;
        QueuePair qa;
        QueuePair qb;
        MemorySegment local;
        MemorySegment recv;
        MemorySegment target;
        MemorySegment readSource;
        MemoryRegion mrLocal;
        MemoryRegion mrRecv;
        MemoryRegion mrTarget;
        MemoryRegion mrRead;
        final Expect[] slots = new Expect[DEPTH];
        final boolean[] targetBusy = new boolean[DEPTH];
        final ArrayDeque<Expect> receives = new ArrayDeque<>();
        MemorySegment casWord;
        MemoryRegion mrCas;
        long nextSeq;
        long casValue;
        long casDone;
        int inFlight;

        Pair(int index) {
            this.index = index;
        }
    }

    private Result execute(Progress progress) {
        int run = RUNS.incrementAndGet();
        Faults faults = new Faults(cfg.loss(), cfg.duplicate(), cfg.reorder(), cfg.corrupt());
        DeviceSpec specA;
        DeviceSpec specB;
        if (cfg.udp()) {
            // Real UDP sockets on the loopback interface, faults injected in front of them.
            InetAddress ia = loopback("127.0.0.1");
            InetAddress ib = loopback("127.0.0.2");
            String port = Integer.toString(freeUdpPort(24991, ia, ib));
            specA = DeviceSpec.of("soft", "udp").with("addr", "127.0.0.1").with("port", port);
            specB = DeviceSpec.of("soft", "udp").with("addr", "127.0.0.2").with("port", port);
        } else {
            // A fabric of their own: nothing else on it, so nothing else sees the faults.
            specA = DeviceSpec.of("soft", "loopback").with("fabric", "stress" + run);
            specB = specA;
        }
        Device devA = Verbs.createDevice(withFaults(specA.with("name", "stress" + run + "a"), faults,
                cfg.seed() * 31 + 1));
        Device devB;
        try {
            devB = Verbs.createDevice(withFaults(specB.with("name", "stress" + run + "b"), faults,
                    cfg.seed() * 31 + 2));
        } catch (RuntimeException e) {
            Verbs.removeDevice(devA);
            throw e;
        }
        long start = System.nanoTime();
        Map<String, Long> counters;
        long retransmits;
        long[] injected = new long[4];
        try (Arena arena = Arena.ofShared(); Context a = devA.open(); Context b = devB.open()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue cqa = a.createCq(cfg.qps() * DEPTH * 2 + 16);
            CompletionQueue cqb = b.createCq(cfg.qps() * DEPTH * 2 + 16);
            int all = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ
                    | Access.REMOTE_ATOMIC;
            MemorySegment counter = arena.allocate(8, 8);
            counter.set(ValueLayout.JAVA_LONG, 0, StressTraffic.COUNTER_START);
            MemoryRegion mrCounter = pb.regMr(counter, all);
            Pair[] pairs = new Pair[cfg.qps()];
            long slotBytes = cfg.maxSize();
            for (int i = 0; i < pairs.length; i++) {
                Pair p = new Pair(i);
                pairs[i] = p;
                p.qa = pa.createQp(new QpInitAttr(QpType.RC, cqa, cqa).cap(new QpCap(DEPTH, DEPTH, 4, 4, 0)));
                p.qb = pb.createQp(new QpInitAttr(QpType.RC, cqb, cqb).cap(new QpCap(DEPTH, DEPTH * 2, 4, 4, 0)));
                PreparedQueuePair qa = prepare(p.qa);
                PreparedQueuePair qb = prepare(p.qb);
                qa.handshake(qb.endpoint());
                qb.handshake(qa.endpoint());
                p.local = arena.allocate(slotBytes * DEPTH, 8);
                p.recv = arena.allocate(slotBytes * DEPTH * 2, 8);
                p.target = arena.allocate(slotBytes * DEPTH, 8);
                p.readSource = arena.allocate(slotBytes, 8);
                for (long j = 0; j < slotBytes; j++) {
                    p.readSource.set(ValueLayout.JAVA_BYTE, j, pattern(StressTraffic.readSourceSeq(i), j));
                }
                p.mrLocal = pa.regMr(p.local, all);
                p.mrRecv = pb.regMr(p.recv, all);
                p.mrTarget = pb.regMr(p.target, all);
                p.mrRead = pb.regMr(p.readSource, all);
                p.casWord = arena.allocate(8, 8);
                p.casWord.set(ValueLayout.JAVA_LONG, 0, StressTraffic.casStart(i));
                p.mrCas = pb.regMr(p.casWord, all);
                for (int r = 0; r < DEPTH * 2; r++) {
                    postRecv(p, r);
                }
            }
            WorkCompletion[] wcs = WorkCompletion.array(32);
            long posted = 0;
            long lastReport = System.nanoTime();
            progressClock(lastReport);
            int idle = 0;
            outer:
            while (verified < cfg.messages() && firstError == null) {
                for (Pair p : pairs) {
                    while (posted < cfg.messages() && p.inFlight < DEPTH) {
                        if (!post(p, mrCounter)) {
                            break;
                        }
                        posted++;
                    }
                }
                int n = cqa.poll(wcs);
                for (int i = 0; i < n; i++) {
                    requesterCompletion(pairs, wcs[i]);
                }
                int m = cqb.poll(wcs);
                for (int i = 0; i < m; i++) {
                    receiverCompletion(pairs, wcs[i]);
                }
                long now = System.nanoTime();
                if (stalled(verified, cfg.messages(), now)) {
                    break outer;
                }
                idle = StressTraffic.idle(idle, n + m);
                if (progress != null && now - lastReport > 1_000_000_000L) {
                    lastReport = now;
                    progress.report(verified, cfg.messages(), retransmits(a, b));
                }
            }
            checkAtomics(counter);
            retransmits = retransmits(a, b);
            counters = b.counters(1);
            long[] fa = Faults.injected(a.counters(1));
            long[] fb = Faults.injected(counters);
            for (int i = 0; i < injected.length; i++) {
                injected[i] = fa[i] + fb[i];
            }
            for (Pair p : pairs) {
                p.qa.close();
                p.qb.close();
                p.mrLocal.close();
                p.mrRecv.close();
                p.mrTarget.close();
                p.mrRead.close();
                p.mrCas.close();
            }
            mrCounter.close();
            cqa.close();
            cqb.close();
            pa.close();
            pb.close();
        } finally {
            Verbs.removeDevice(devA);
            Verbs.removeDevice(devB);
        }
        return new Result(cfg.messages(), verified, dataErrors, duplicates, retransmits, errorCompletions, firstError,
                System.nanoTime() - start, injected[0], injected[1], injected[2], injected[3], counters);
    }

    private static DeviceSpec withFaults(DeviceSpec spec, Faults faults, long seed) {
        for (Map.Entry<String, String> e : faults.specOptions(seed).entrySet()) {
            spec = spec.with(e.getKey(), e.getValue());
        }
        return spec;
    }

    /**
     * A UDP port, at or above {@code from}, that is free on every one of {@code addresses} right now
     * (the two devices share one port, as RoCE peers share 4791).
     */
    private static int freeUdpPort(int from, InetAddress... addresses) {
        for (int port = from; port < from + 500 && port < 65536; port++) {
            List<DatagramSocket> held = new ArrayList<>();
            try {
                for (InetAddress a : addresses) {
                    held.add(new DatagramSocket(new InetSocketAddress(a, port)));
                }
                return port;
            } catch (SocketException e) {
                // taken on one of them: try the next port
            } finally {
                held.forEach(DatagramSocket::close);
            }
        }
        throw new IllegalStateException("no UDP port free on all of " + Arrays.toString(addresses));
    }

    private static InetAddress loopback(String text) {
        try {
            return InetAddress.getByName(text);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long retransmits(Context a, Context b) {
        return a.counters(1).get("retransmits") + b.counters(1).get("retransmits");
    }

    /** The guided bring-up to INIT: GID index 1, the run's MTU, {@link #DEPTH} READs/atomics each way. */
    private PreparedQueuePair prepare(QueuePair q) {
        // PSNs start just below the 24-bit wrap so every run crosses it.
        return new QueuePairBuilder(q.pd(), QpType.RC, q.sendCq(), q.recvCq()).gidIndex(1)
                .mtu(Mtu.ofBytes(cfg.mtu())).access(Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC
                        | Access.LOCAL_WRITE)
                .maxRdAtomic(DEPTH).maxDestRdAtomic(DEPTH).minRnrTimer(1).timeout(12).retryCnt(7).rnrRetry(7)
                .psn(0xFFFFF0 + q.qpn() % 8).prepare(q);
    }

    /** Byte {@code offset} of message {@code seq} in a stress run (also used by the two-JVM run in tools). */
    public static byte pattern(long seq, long offset) {
        long x = seq * 0x9E3779B97F4A7C15L + offset * 0xBF58476D1CE4E5B9L;
        return (byte) (x ^ (x >>> 29) ^ (x >>> 47));
    }

    private void postRecv(Pair p, int slot) {
        long base = (long) slot * cfg.maxSize();
        RecvWorkRequest r = new RecvWorkRequest().wrId(((long) p.index << 32) | slot);
        splitSges(cfg.maxSize(), (off, len) -> r.sge(p.mrRecv, base + off, len));
        p.qb.postRecv(r);
    }

    private interface SgeSink {
        void add(long offset, int length);
    }

    /** Splits {@code length} bytes into 1..4 pieces ({@link StressTraffic#split}). */
    private void splitSges(int length, SgeSink sink) {
        int[] cuts = new int[StressTraffic.MAX_SGES + 1];
        int pieces = StressTraffic.split(random, length, cuts);
        for (int i = 0; i < pieces; i++) {
            sink.add(cuts[i], cuts[i + 1] - cuts[i]);
        }
    }

    private int randomLength() {
        return StressTraffic.randomLength(random, cfg.maxSize(), cfg.mtu());
    }

    private boolean post(Pair p, MemoryRegion counter) {
        int slot = -1;
        for (int i = 0; i < DEPTH; i++) {
            if (p.slots[i] == null && !p.targetBusy[i]) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            return false;
        }
        Kind kind = KINDS[random.nextInt(KINDS.length)];
        int len = kind == Kind.FETCH_ADD || kind == Kind.CMP_SWAP ? 8 : randomLength();
        long seq = p.nextSeq++;
        long base = (long) slot * cfg.maxSize();
        SendWorkRequest wr = new SendWorkRequest().wrId(((long) p.index << 32) | slot).flags(SendFlag.SIGNALED);
        switch (kind) {
            case SEND, WRITE, WRITE_IMM -> {
                for (int j = 0; j < len; j++) {
                    p.local.set(ValueLayout.JAVA_BYTE, base + j, pattern(seq, j));
                }
                splitSges(len, (off, l) -> wr.sge(p.mrLocal, base + off, l));
                if (kind == Kind.SEND) {
                    wr.opcode(WrOpcode.SEND_WITH_IMM).immData((int) seq);
                } else {
                    wr.opcode(kind == Kind.WRITE ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_WRITE_WITH_IMM)
                            .immData((int) seq).rdma(p.mrTarget.address() + base, p.mrTarget.rkey());
                    p.targetBusy[slot] = true;
                }
            }
            case READ -> {
                p.local.asSlice(base, cfg.maxSize()).fill((byte) 0);
                int off = len == cfg.maxSize() ? 0 : random.nextInt(cfg.maxSize() - len + 1);
                splitSges(len, (o, l) -> wr.sge(p.mrLocal, base + o, l));
                wr.opcode(WrOpcode.RDMA_READ).rdma(p.mrRead.address() + off, p.mrRead.rkey());
                p.slots[slot] = new Expect(seq, kind, len, slot, off);
                p.inFlight++;
                p.qa.postSend(wr);
                return true;
            }
            case FETCH_ADD -> wr.fetchAdd(counter.address(), counter.rkey(), 1).sge(p.mrLocal, base, 8);
            case CMP_SWAP -> {
                long expect = StressTraffic.casStart(p.index) + p.casValue;
                wr.compareAndSwap(p.mrCas.address(), p.mrCas.rkey(), expect, expect + 1).sge(p.mrLocal, base, 8);
                p.casValue++;
            }
        }
        Expect e = new Expect(seq, kind, len, slot, 0);
        p.slots[slot] = e;
        if (kind == Kind.SEND || kind == Kind.WRITE_IMM) {
            p.receives.add(e);
        }
        p.inFlight++;
        p.qa.postSend(wr);
        return true;
    }

    private void requesterCompletion(Pair[] pairs, WorkCompletion wc) {
        Pair p = pairs[(int) (wc.wrId() >>> 32)];
        int slot = (int) wc.wrId();
        Expect e = p.slots[slot];
        p.slots[slot] = null;
        p.inFlight--;
        if (wc.status() != WcStatus.SUCCESS) {
            errorCompletions++;
            error("QP " + p.index + " " + (e == null ? "?" : e.kind()) + " completed with " + wc.status());
            return;
        }
        if (e == null) {
            dataError("completion for an empty slot on QP " + p.index);
            return;
        }
        long base = (long) slot * cfg.maxSize();
        switch (e.kind()) {
            case SEND -> verified++;
            case WRITE -> {
                p.targetBusy[slot] = false;
                if (check(p.target, base, e.seq(), e.length())) {
                    verified++;
                } else {
                    dataError("RDMA WRITE data wrong on QP " + p.index + " seq " + e.seq());
                }
            }
            case WRITE_IMM -> verified++;
            case READ -> {
                if (StressTraffic.matches(p.local, base, StressTraffic.readSourceSeq(p.index), e.offset(),
                        e.length())) {
                    verified++;
                } else {
                    dataError("RDMA READ data wrong on QP " + p.index + " seq " + e.seq());
                }
            }
            case FETCH_ADD -> {
                fetchAddResults.add(p.local.get(ValueLayout.JAVA_LONG, base));
                verified++;
            }
            case CMP_SWAP -> {
                // Each CAS of this QP expects the value the previous one wrote: all must have matched.
                long got = p.local.get(ValueLayout.JAVA_LONG, base);
                if (got == StressTraffic.casStart(p.index) + p.casDone) {
                    p.casDone++;
                    verified++;
                } else if (got < StressTraffic.casStart(p.index) + p.casDone) {
                    duplicates++;
                    error("CMP_SWAP on QP " + p.index + " saw an old value: executed twice?");
                } else {
                    dataError("CMP_SWAP on QP " + p.index + " returned " + got);
                }
            }
        }
    }

    private void receiverCompletion(Pair[] pairs, WorkCompletion wc) {
        Pair p = pairs[(int) (wc.wrId() >>> 32)];
        int slot = (int) wc.wrId();
        if (failedReceive(wc, p.index)) {
            return;
        }
        Expect e = p.receives.poll();
        long seq = Integer.toUnsignedLong(wc.immData());
        if (e == null || (int) e.seq() != wc.immData()) {
            if (e != null && Integer.compareUnsigned(wc.immData(), (int) e.seq()) < 0) {
                duplicates++;
                error("message " + seq + " on QP " + p.index + " delivered twice");
            } else {
                dataError("QP " + p.index + " received message " + seq + ", expected " + (e == null ? "none" : e.seq()));
            }
            return;
        }
        if (e.kind() == Kind.SEND) {
            if (wc.opcode() != WcOpcode.RECV || wc.byteLen() != e.length()
                    || !check(p.recv, (long) slot * cfg.maxSize(), e.seq(), e.length())) {
                dataError("SEND seq " + e.seq() + " on QP " + p.index + " arrived wrong (" + wc + ")");
            }
        } else {
            long base = (long) e.slot() * cfg.maxSize();
            if (wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM || wc.byteLen() != e.length()
                    || !check(p.target, base, e.seq(), e.length())) {
                dataError("WRITE_WITH_IMM seq " + e.seq() + " on QP " + p.index + " arrived wrong (" + wc + ")");
            }
            p.targetBusy[e.slot()] = false;
        }
        postRecv(p, slot);
    }

    private static boolean check(MemorySegment s, long base, long seq, int len) {
        return StressTraffic.matches(s, base, seq, 0, len);
    }

    private void checkAtomics(MemorySegment counter) {
        long n = fetchAddResults.size();
        long end = counter.get(ValueLayout.JAVA_LONG, 0);
        if (firstError == null && end != 1000 + n) {
            if (end > 1000 + n) {
                duplicates += end - 1000 - n;
                error("FETCH_ADD counter is " + end + " after " + n + " adds: an add ran twice");
            } else {
                dataError("FETCH_ADD counter is " + end + " after " + n + " adds");
            }
        }
        long[] got = fetchAddResults.stream().mapToLong(Long::longValue).sorted().toArray();
        for (int i = 0; i < got.length; i++) {
            if (got[i] != 1000 + i) {
                dataError("FETCH_ADD results are not a serial order: position " + i + " has " + got[i]);
                break;
            }
        }
    }

}

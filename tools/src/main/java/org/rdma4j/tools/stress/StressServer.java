// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import static org.rdma4j.tools.stress.StressTraffic.DEPTH;
import static org.rdma4j.tools.stress.StressTraffic.RECV_DEPTH;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ServerSocket;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The passive side of a two-JVM stress run ({@code rdma4j stress --bind ADDRESS}): it waits for one
 * client on the TCP port, takes the run's parameters from it, and offers per queue pair a receive
 * queue, a target region for RDMA WRITEs, a region filled with a known pattern for RDMA READs and a
 * CMP_SWAP word, plus one FETCH_ADD counter shared by all pairs. It checks every receive completion as
 * it comes (status, the SEND's bytes against the pattern, sequence numbers that only increase per
 * queue pair) and folds it into a per-pair hash; at the end it compares the hashes, counts and atomic
 * words with what the client says it caused, and sends back its verdict. One run per instance; not
 * thread safe.
 */
public final class StressServer extends StressTally {
    private static final int EXCHANGE_TIMEOUT_MS = 60_000;
    /** How long the server keeps polling for receives the client's end says it should still see. */
    private static final long DRAIN_NANOS = 10_000_000_000L;

    private final Faults faults;
    private int gidIndex = 1;
    private final int tcpPort;
    private final int maxQps;
    private final int maxSizeLimit;
    private final PrintWriter out;
    private final PrintWriter err;
    private final RecvWorkRequest rwr = new RecvWorkRequest();
    private final int[] cuts = new int[StressTraffic.MAX_SGES + 1];
    private SplittableRandom random;
    private int maxSize;

    private long receives;
    private long orderErrors;

    /** What the control thread learned from the client; read by the polling thread. */
    private volatile long clientVerified;
    private volatile long lastHeardNanos;
    private volatile Control.End end;
    private volatile String controlError;

    /** One of the server's queue pairs and the regions the client works on through it. */
    private static final class Pair {
        final int index;
        QueuePair qp;
        MemorySegment recv;
        MemoryRegion mrRecv;
        MemorySegment target;
        MemoryRegion mrTarget;
        MemorySegment readSource;
        MemoryRegion mrRead;
        MemorySegment casWord;
        MemoryRegion mrCas;
        long lastSeq = -1;
        long receives;
        long hash;

        Pair(int index) {
            this.index = index;
        }
    }

    public StressServer(Faults faults, int tcpPort, int maxQps, int maxSizeLimit, PrintWriter out,
                        PrintWriter err) {
        this.faults = faults;
        this.tcpPort = tcpPort;
        this.maxQps = maxQps;
        this.maxSizeLimit = maxSizeLimit;
        this.out = out;
        this.err = err;
    }

    /** Serves one client, prints the report; the exit code (0 only if both sides found everything right). */
    public int run(DeviceOptions devices, String deviceName, int gidIndex) {
        if (devices.bindAddress() != null) {
            out.printf(Locale.ROOT, "  server: %s, TCP port %d, UDP port %d; waiting for a client%n",
                    devices.bindAddress().getHostAddress(), tcpPort, devices.udpPort());
        } else {
            out.printf(Locale.ROOT, "  server: device %s GID index %d, TCP port %d; waiting for a client%n",
                    deviceName, gidIndex, tcpPort);
        }
        this.gidIndex = gidIndex;
        out.flush();
        Control.Hello hello;
        Control ctl;
        try (ServerSocket listener = Control.listen(tcpPort)) {
            ctl = Control.accept(listener, EXCHANGE_TIMEOUT_MS);
        } catch (Control.Failure f) {
            return fail(err, f.getMessage());
        } catch (java.io.IOException e) {
            return fail(err, "closing the TCP listener: " + Control.describe(e));
        }
        try (ctl) {
            try {
                hello = ctl.readHello(maxQps);
            } catch (Control.Failure f) {
                return fail(err, f.getMessage());
            }
            String bad = check(hello);
            if (bad != null) {
                try {
                    ctl.sendReply(new Control.Reply(bad, 0, 0, null));
                } catch (Control.Failure ignored) {
                    // the refusal is what matters
                }
                return fail(err, "refused the run: " + bad);
            }
            out.printf(Locale.ROOT, "client %s: messages=%d seed=%d qps=%d max_size=%d mtu=%d%n",
                    hello.endpoints()[0].gid().toInetAddress().getHostAddress(), hello.messages(), hello.seed(), hello.qps(), hello.maxSize(),
                    hello.mtu());
            out.printf(Locale.ROOT, "  (to repeat this run: give the client --seed %d)%n", hello.seed());
            out.flush();
            maxSize = hello.maxSize();
            random = new SplittableRandom(hello.seed() * 31 + 3);
            Device dev = devices.resolve(deviceName != null ? deviceName : "stress-server",
                    faults.specOptions(hello.seed() * 31 + 2));
            try {
                return serve(dev, ctl, hello);
            } finally {
                devices.release();
            }
        }
    }

    private String check(Control.Hello h) {
        if (h.messages() < 1) {
            return "messages must be at least 1, not " + h.messages();
        }
        if (h.maxSize() < 8 || h.maxSize() > maxSizeLimit) {
            return "max size must be 8.." + maxSizeLimit + " bytes, not " + h.maxSize();
        }
        if (Mtu.ofBytes(h.mtu()) == null) {
            return "MTU " + h.mtu() + " is not an IB MTU";
        }
        return null;
    }

    private int serve(Device dev, Control ctl, Control.Hello hello) {
        long start = System.nanoTime();
        int qps = hello.qps();
        Pair[] pairs = new Pair[qps];
        ArrayDeque<AutoCloseable> resources = new ArrayDeque<>();
        long retransmits;
        Map<String, Long> counters;
        Control.Verdict verdict;
        boolean atomicsMatch;
        boolean hashesMatch;
        try (Arena arena = Arena.ofShared(); Context ctx = dev.open()) {
            try {
                ProtectionDomain pd = push(resources, ctx.allocPd());
                CompletionQueue cq = push(resources, ctx.createCq(qps * RECV_DEPTH + 16));
                MemorySegment counter = arena.allocate(8, 8);
                counter.set(ValueLayout.JAVA_LONG, 0, StressTraffic.COUNTER_START);
                MemoryRegion mrCounter = push(resources, pd.regMr(counter, StressTraffic.ALL_ACCESS));
                Control.Target[] targets = new Control.Target[qps];
                long slotBytes = maxSize;
                for (int i = 0; i < qps; i++) {
                    Pair p = new Pair(i);
                    pairs[i] = p;
                    p.qp = push(resources, pd.createQp(new QpInitAttr(QpType.RC, cq, cq)
                            .cap(new QpCap(1, RECV_DEPTH, 1, StressTraffic.MAX_SGES, 0))));
                    p.recv = arena.allocate(slotBytes * RECV_DEPTH, 8);
                    p.mrRecv = push(resources, pd.regMr(p.recv, StressTraffic.ALL_ACCESS));
                    p.target = arena.allocate(slotBytes * DEPTH, 8);
                    p.mrTarget = push(resources, pd.regMr(p.target, StressTraffic.ALL_ACCESS));
                    p.readSource = arena.allocate(slotBytes, 8);
                    for (long j = 0; j < slotBytes; j++) {
                        p.readSource.set(ValueLayout.JAVA_BYTE, j,
                                StressTraffic.pattern(StressTraffic.readSourceSeq(i), j));
                    }
                    p.mrRead = push(resources, pd.regMr(p.readSource, StressTraffic.ALL_ACCESS));
                    p.casWord = arena.allocate(8, 8);
                    p.casWord.set(ValueLayout.JAVA_LONG, 0, StressTraffic.casStart(i));
                    p.mrCas = push(resources, pd.regMr(p.casWord, StressTraffic.ALL_ACCESS));
                    PreparedQueuePair prepared = StressTraffic.prepare(p.qp, hello.mtu(), gidIndex);
                    prepared.handshake(hello.endpoints()[i]);
                    for (int r = 0; r < RECV_DEPTH; r++) {
                        postRecv(p, r);
                    }
                    targets[i] = new Control.Target(prepared.endpoint(), p.mrTarget.address(), p.mrTarget.rkey(),
                            p.mrRead.address(), p.mrRead.rkey(), p.mrCas.address(), p.mrCas.rkey());
                }
                // Receives are posted and the QPs are at RTS before the client learns where they are.
                ctl.sendReply(new Control.Reply(null, mrCounter.address(), mrCounter.rkey(), targets));
                lastHeardNanos = System.nanoTime();
                Thread.ofPlatform().daemon().name("rdma4j-stress-control").start(() -> listen(ctl, qps));
                poll(cq, pairs, hello.messages(), start);
                retransmits = ctx.counters(1).getOrDefault("retransmits", 0L);
                Control.End e = end;
                boolean compared = e != null && e.clean() && e.verified() == hello.messages();
                hashesMatch = compared;
                atomicsMatch = compared;
                if (compared) {
                    for (Pair p : pairs) {
                        if (p.receives != e.receives()[p.index] || p.hash != e.hashes()[p.index]) {
                            hashesMatch = false;
                            dataError("QP " + p.index + ": " + p.receives + " receives with hash "
                                    + Long.toHexString(p.hash) + ", the client expected " + e.receives()[p.index]
                                    + " with hash " + Long.toHexString(e.hashes()[p.index]));
                        }
                        long cas = p.casWord.get(ValueLayout.JAVA_LONG, 0);
                        if (cas != e.casFinal()[p.index]) {
                            atomicsMatch = false;
                            dataError("CMP_SWAP word of QP " + p.index + " is " + cas + ", the client expected "
                                    + e.casFinal()[p.index]);
                        }
                    }
                    long got = counter.get(ValueLayout.JAVA_LONG, 0);
                    long want = StressTraffic.COUNTER_START + e.fetchAdds();
                    if (got > want) {
                        atomicsMatch = false;
                        duplicates += got - want;
                        error("FETCH_ADD counter is " + got + " after " + e.fetchAdds() + " adds: an add ran twice");
                    } else if (got < want) {
                        atomicsMatch = false;
                        dataError("FETCH_ADD counter is " + got + " after " + e.fetchAdds() + " adds, not " + want);
                    }
                }
                verdict = new Control.Verdict(receives, dataErrors, orderErrors, duplicates, errorCompletions,
                        compared, hashesMatch, atomicsMatch, retransmits, firstError != null ? firstError : "");
                if (controlError == null) {
                    try {
                        ctl.sendVerdict(verdict);
                    } catch (Control.Failure f) {
                        error(f.getMessage());
                    }
                }
            } catch (Control.Failure f) {
                return fail(err, f.getMessage());
            } finally {
                StressClient.closeAll(resources);
            }
            counters = ctx.counters(1);
        }
        return report(hello, verdict, end, counters, System.nanoTime() - start);
    }

    /** The control thread: takes the client's progress frames and its end of the run. */
    private void listen(Control ctl, int qps) {
        try {
            ctl.readClientFrames(qps, new Control.ClientFrames() {
                @Override
                public void progress(long verified) {
                    clientVerified = verified;
                    lastHeardNanos = System.nanoTime();
                }

                @Override
                public void end(Control.End e) {
                    clientVerified = e.verified();
                    lastHeardNanos = System.nanoTime();
                    end = e;
                }
            });
        } catch (Control.Failure f) {
            controlError = f.getMessage();
        }
    }

    private void poll(CompletionQueue cq, Pair[] pairs, long messages, long start) {
        WorkCompletion[] wcs = WorkCompletion.array(32);
        long lastReport = System.nanoTime();
        long endSeen = 0;
        int idle = 0;
        for (;;) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                receiveCompletion(pairs, wcs[i]);
            }
            long now = System.nanoTime();
            Control.End e = end;
            if (e != null) {
                // The client is done; its last SENDs' receives may still be on the way to the CQ.
                if (endSeen == 0) {
                    endSeen = now;
                }
                if (allArrived(pairs, e) || now - endSeen > DRAIN_NANOS || !e.clean()) {
                    return;
                }
            } else if (controlError != null) {
                error("lost the client: " + controlError);
                return;
            } else if (now - lastHeardNanos > StressTraffic.STALL_NANOS) {
                error("no word from the client for 60 s");
                return;
            }
            idle = StressTraffic.idle(idle, n);
            if (now - lastReport > 1_000_000_000L) {
                lastReport = now;
                out.printf(Locale.ROOT, "  %d receives verified; client at %d/%d, %.1f s%n", receives, clientVerified,
                        messages, (now - start) / 1e9);
                out.flush();
            }
        }
    }

    private static boolean allArrived(Pair[] pairs, Control.End e) {
        for (Pair p : pairs) {
            if (p.receives < e.receives()[p.index]) {
                return false;
            }
        }
        return true;
    }

    private void postRecv(Pair p, int slot) {
        long base = (long) slot * maxSize;
        rwr.clear().wrId(((long) p.index << 32) | slot);
        int pieces = StressTraffic.split(random, maxSize, cuts);
        for (int i = 0; i < pieces; i++) {
            rwr.sge(p.mrRecv, base + cuts[i], cuts[i + 1] - cuts[i]);
        }
        p.qp.postRecv(rwr);
    }

    private void receiveCompletion(Pair[] pairs, WorkCompletion wc) {
        Pair p = pairs[(int) (wc.wrId() >>> 32)];
        int slot = (int) wc.wrId();
        if (failedReceive(wc, p.index)) {
            return;
        }
        long seq = Integer.toUnsignedLong(wc.immData());
        boolean withWrite = wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM;
        if (!withWrite && wc.opcode() != WcOpcode.RECV || (wc.wcFlags() & org.rdma4j.verbs.WcFlag.WITH_IMM) == 0) {
            dataError("QP " + p.index + " completed a receive without immediate data: " + wc);
        } else if (seq == p.lastSeq) {
            duplicates++;
            error("message " + seq + " on QP " + p.index + " delivered twice");
        } else if (seq < p.lastSeq) {
            orderErrors++;
            error("QP " + p.index + " received message " + seq + " after " + p.lastSeq);
        } else if (!withWrite && !StressTraffic.matches(p.recv, (long) slot * maxSize, seq, 0, wc.byteLen())) {
            dataError("SEND seq " + seq + " on QP " + p.index + " arrived wrong (" + wc.byteLen() + " bytes)");
        }
        p.lastSeq = Math.max(p.lastSeq, seq);
        p.receives++;
        p.hash = StressTraffic.fold(p.hash, seq, wc.byteLen(), withWrite);
        receives++;
        postRecv(p, slot);
    }

    private int report(Control.Hello hello, Control.Verdict v, Control.End e, Map<String, Long> counters,
                       long elapsedNanos) {
        double seconds = elapsedNanos / 1e9;
        out.printf(Locale.ROOT, "elapsed %.2f s, %.0f receives/s%n", seconds, receives / Math.max(seconds, 1e-9));
        printDevice(out, "server", counters);
        out.println("server: " + v.describe());
        long delivered = e != null ? e.verified() : 0;
        long data = v.dataErrors() + v.orderErrors() + (e != null ? e.dataErrors() : 0);
        long dup = v.duplicates() + (e != null ? e.duplicates() : 0);
        long retransmits = v.retransmits() + (e != null ? e.retransmits() : 0);
        boolean ok = v.ok() && firstError == null && e != null && e.clean() && e.verified() == hello.messages();
        if (e != null) {
            out.printf(Locale.ROOT, "client: verified=%d data_errors=%d duplicates=%d error_completions=%d%n",
                    e.verified(), e.dataErrors(), e.duplicates(), e.errorCompletions());
        }
        if (!ok) {
            out.printf(Locale.ROOT, "first error: %s%n", firstError != null ? firstError
                    : e == null ? "the client did not finish the run"
                    : !e.firstError().isEmpty() ? "(client) " + e.firstError()
                    : "the client verified " + e.verified() + " of " + hello.messages() + " messages");
        }
        out.println(summary(hello.messages(), delivered, data, dup, retransmits));
        out.flush();
        return ok ? 0 : StressReport.EXIT_FAILED;
    }
}

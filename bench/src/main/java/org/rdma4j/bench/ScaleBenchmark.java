// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;

/**
 * How far one soft device scales (a benchmark, not a test): how many RC QPs it holds, the heap an idle
 * RC QP costs, the QP creation and MR registration rates with the tables empty and full, and the CPU
 * the device's own threads burn while every QP is idle. Uses the public verbs API only, so the same
 * source measures older builds. Run (after {@code ./mvnw -q -pl bench -am package -DskipTests}):
 * {@snippet lang=sh :
 * java --enable-native-access=ALL-UNNAMED -Xmx8g -cp bench/target/benchmarks.jar org.rdma4j.bench.ScaleBenchmark
 * }
 * Options: {@code qps=N} (default: the device's max_qp), {@code mrs=N} (default: max_mr),
 * {@code chunk=N} (QPs or MRs per timed step, default 8192), {@code idleSeconds=S} (default 3),
 * {@code budgetSeconds=S} (stop a fill once one step took longer, default 20), {@code rts=false} (leave
 * the QPs in RESET). Prints one line per figure. Not thread safe; control path only.
 */
public final class ScaleBenchmark {
    private static final int ALL_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE
            | Access.REMOTE_READ | Access.REMOTE_ATOMIC;

    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private int chunk = 8192;
    private double idleSeconds = 3;
    private double budgetSeconds = 20;
    private boolean rts = true;
    private boolean histogram;

    private ScaleBenchmark() {}

    public static void main(String[] args) throws Exception {
        ScaleBenchmark b = new ScaleBenchmark();
        int qps = -1;
        int mrs = -1;
        for (String a : args) {
            String[] kv = a.split("=", 2);
            switch (kv[0]) {
                case "qps" -> qps = Integer.parseInt(kv[1]);
                case "mrs" -> mrs = Integer.parseInt(kv[1]);
                case "chunk" -> b.chunk = Integer.parseInt(kv[1]);
                case "idleSeconds" -> b.idleSeconds = Double.parseDouble(kv[1]);
                case "budgetSeconds" -> b.budgetSeconds = Double.parseDouble(kv[1]);
                case "rts" -> b.rts = Boolean.parseBoolean(kv[1]);
                case "histogram" -> b.histogram = Boolean.parseBoolean(kv[1]);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        b.run(qps, mrs);
        System.exit(0);
    }

    private void run(int wantQps, int wantMrs) {
        Device dev = SoftDevices.createLoopback("scale-" + ProcessHandle.current().pid());
        try (Context ctx = dev.open(); ProtectionDomain pd = ctx.allocPd(); Arena arena = Arena.ofShared()) {
            var attr = ctx.queryDevice();
            int qps = wantQps < 0 ? attr.maxQp() : Math.min(wantQps, attr.maxQp());
            int mrs = wantMrs < 0 ? attr.maxMr() : Math.min(wantMrs, attr.maxMr());
            System.out.printf("device max_qp %d max_mr %d; filling %d QPs (%s), %d MRs%n", attr.maxQp(),
                    attr.maxMr(), qps, rts ? "RTS" : "RESET", mrs);
            CompletionQueue cq = ctx.createCq(16);
            warmUp(pd, cq, ctx, arena);
            List<QueuePair> live = new ArrayList<>(qps);
            List<Double> idle = new ArrayList<>();
            idle.add(idleCpu(0));
            double deregEmpty = deregCost(pd, arena);
            long heapBefore = usedHeap();
            fillQps(pd, cq, ctx, live, qps, idle);
            long heapAfter = usedHeap();
            if (histogram) {
                printHistogram();
            }
            System.out.printf("QPs per device reached: %d%n", live.size());
            System.out.printf("heap per idle RC QP (1 send WR, 1 recv WR, %s): %d bytes%n", rts ? "RTS" : "RESET",
                    live.isEmpty() ? 0 : (heapAfter - heapBefore) / live.size());
            if (live.size() < 65536 && live.size() > 0) {
                idle.add(idleCpu(live.size()));
            }
            System.out.printf("idle CPU of the device threads: %s%n", idle);
            System.out.printf("MR deregistration (%d MRs, one at a time): %.2f us each at 0 QPs, %.2f us at %d QPs%n",
                    DEREG_MRS, deregEmpty, deregCost(pd, arena), live.size());
            long t0 = System.nanoTime();
            for (QueuePair q : live) {
                q.close();
            }
            System.out.printf("destroyed %d QPs in %.2f s%n", live.size(), (System.nanoTime() - t0) / 1e9);
            live.clear();
            fillMrs(pd, arena, mrs);
            cq.close();
        } finally {
            SoftDevices.remove(dev);
        }
    }

    private void fillQps(ProtectionDomain pd, CompletionQueue cq, Context ctx, List<QueuePair> live, int qps,
                         List<Double> idle) {
        AhAttr self = AhAttr.roce(ctx.queryGid(1, 1), 1);
        double first = -1;
        double last = -1;
        while (live.size() < qps) {
            int n = Math.min(chunk, qps - live.size());
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                QueuePair q = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(1, 1, 1, 1, 0)));
                live.add(q);
                if (rts) {
                    toRts(q, self);
                }
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double rate = n / secs;
            if (first < 0) {
                first = rate;
            }
            last = rate;
            System.out.printf("  QPs %7d..%7d: %8.0f QPs/s%n", live.size() - n, live.size(), rate);
            if (live.size() == 65536) {
                idle.add(idleCpu(live.size()));
            }
            if (secs > budgetSeconds) {
                System.out.printf("  stopped: one step of %d QPs took %.1f s%n", n, secs);
                break;
            }
        }
        System.out.printf("QP creation rate (%s): empty %.0f /s, full %.0f /s%n", rts ? "create + INIT/RTR/RTS"
                : "create", first, last);
        if (live.size() > 65536) {
            idle.add(idleCpu(live.size()));
        }
    }

    /** Creates, brings up and destroys QPs and registers MRs once, so "empty" is not measured cold. */
    private void warmUp(ProtectionDomain pd, CompletionQueue cq, Context ctx, Arena arena) {
        AhAttr self = AhAttr.roce(ctx.queryGid(1, 1), 1);
        MemorySegment buf = arena.allocate(4096, 4096);
        for (int round = 0; round < 3; round++) {
            List<QueuePair> qps = new ArrayList<>();
            List<MemoryRegion> mrs = new ArrayList<>();
            for (int i = 0; i < 2048; i++) {
                QueuePair q = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(1, 1, 1, 1, 0)));
                toRts(q, self);
                qps.add(q);
                mrs.add(pd.regMr(buf, ALL_ACCESS));
            }
            qps.forEach(QueuePair::close);
            mrs.forEach(MemoryRegion::close);
        }
    }

    private static void toRts(QueuePair q, AhAttr self) {
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(ALL_ACCESS),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.ofBytes(1024)).destQpNum(q.qpn()).rqPsn(0)
                        .maxDestRdAtomic(1).minRnrTimer(1).ahAttr(self),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    private void fillMrs(ProtectionDomain pd, Arena arena, int mrs) {
        MemorySegment buf = arena.allocate(4096, 4096);
        List<MemoryRegion> live = new ArrayList<>(mrs);
        double first = -1;
        double last = -1;
        long start = System.nanoTime();
        while (live.size() < mrs) {
            int n = Math.min(chunk, mrs - live.size());
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                live.add(pd.regMr(buf, ALL_ACCESS));
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double rate = n / secs;
            if (first < 0) {
                first = rate;
            }
            last = rate;
            System.out.printf("  MRs %7d..%7d: %8.0f MRs/s%n", live.size() - n, live.size(), rate);
            if (secs > budgetSeconds) {
                System.out.printf("  stopped: one step of %d MRs took %.1f s%n", n, secs);
                break;
            }
        }
        System.out.printf("MRs registered: %d in %.2f s%n", live.size(), (System.nanoTime() - start) / 1e9);
        System.out.printf("MR registration rate: empty %.0f /s, full %.0f /s%n", first, last);
        long t0 = System.nanoTime();
        for (MemoryRegion mr : live) {
            mr.close();
        }
        System.out.printf("deregistered %d MRs in %.2f s%n", live.size(), (System.nanoTime() - t0) / 1e9);
    }

    private static final int DEREG_MRS = 4096;

    /** Microseconds per ibv_dereg_mr: registers {@link #DEREG_MRS} MRs, then times deregistering them. */
    private static double deregCost(ProtectionDomain pd, Arena arena) {
        MemorySegment buf = arena.allocate(4096, 4096);
        List<MemoryRegion> mrs = new ArrayList<>(DEREG_MRS);
        for (int i = 0; i < DEREG_MRS; i++) {
            mrs.add(pd.regMr(buf, ALL_ACCESS));
        }
        long t0 = System.nanoTime();
        for (MemoryRegion mr : mrs) {
            mr.close();
        }
        return (System.nanoTime() - t0) / 1e3 / DEREG_MRS;
    }

    /** The heap's largest classes (HotSpot's GC.class_histogram), to see what an idle QP is made of. */
    private static void printHistogram() {
        try {
            Object out = ManagementFactory.getPlatformMBeanServer().invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {null}, new String[] {String[].class.getName()});
            String[] lines = String.valueOf(out).split("\n");
            for (int i = 0; i < Math.min(lines.length, 40); i++) {
                System.out.println("    " + lines[i]);
            }
        } catch (javax.management.JMException e) {
            System.out.println("    no class histogram: " + e);
        }
    }

    /** Percent of one core the device's threads (named rdma4j-*) used over {@link #idleSeconds}. */
    private double idleCpu(int qps) {
        usedHeap(); // no GC inside the window
        long[] ids = deviceThreads();
        long cpu0 = cpu(ids);
        long t0 = System.nanoTime();
        try {
            Thread.sleep((long) (idleSeconds * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        double pct = 100.0 * (cpu(ids) - cpu0) / (System.nanoTime() - t0);
        System.out.printf("idle CPU at %d QPs: %.3f %% of a core (%d device threads)%n", qps, pct, ids.length);
        return Math.round(pct * 1000) / 1000.0;
    }

    private long[] deviceThreads() {
        List<Long> ids = new ArrayList<>();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("rdma4j-")) {
                ids.add(t.getThreadId());
            }
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private long cpu(long[] ids) {
        long sum = 0;
        for (long id : ids) {
            long c = threads.getThreadCpuTime(id);
            if (c > 0) {
                sum += c;
            }
        }
        return sum;
    }

    private long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Access;
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
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Two connected RC queue pairs on two in-process soft devices: side {@link #a} on {@code soft0}, side
 * {@link #b} on a device created for this pair ({@code bench-peer-N}). Each side has its own context,
 * PD, send and receive CQ and one registered buffer. {@link #close()} releases everything, children
 * before parents, and removes the created device. Control path only; not thread safe.
 */
final class SoftPair implements AutoCloseable {
    /** Path MTU of both QPs. */
    static final int MTU_BYTES = 4096;
    /** Local ACK timeout exponent: 4.096 us * 2^14 = 67 ms (never fires on a loss-free fabric). */
    static final int TIMEOUT = 14;
    static final int MAX_INLINE = 64;
    private static final AtomicInteger NEXT_PEER = new AtomicInteger();
    private static final int ALL_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE
            | Access.REMOTE_READ | Access.REMOTE_ATOMIC;

    /** One end: everything a process would own on its side of the connection. */
    static final class Side {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final QueuePair qp;
        final MemorySegment buffer;
        final MemoryRegion mr;

        Side(Context ctx, Arena arena, long bufferBytes, int sqDepth, int rqDepth) {
            this.ctx = ctx;
            pd = ctx.allocPd();
            sendCq = ctx.createCq(sqDepth);
            recvCq = ctx.createCq(Math.max(1, rqDepth));
            qp = pd.createQp(new QpInitAttr(QpType.RC, sendCq, recvCq)
                    .cap(new QpCap(sqDepth, Math.max(1, rqDepth), 1, 1, MAX_INLINE)));
            buffer = arena.allocate(bufferBytes, 4096);
            mr = pd.regMr(buffer, ALL_ACCESS);
        }

        void close() {
            qp.close();
            mr.close();
            sendCq.close();
            recvCq.close();
            pd.close();
            ctx.close();
        }
    }

    private final Arena arena = Arena.ofShared();
    private final Device peerDevice;
    final Side a;
    final Side b;

    /**
     * @param bufferBytes size of each side's registered buffer
     * @param sqDepth     max_send_wr (and send CQ entries)
     * @param rqDepth     max_recv_wr (and receive CQ entries)
     */
    SoftPair(long bufferBytes, int sqDepth, int rqDepth) {
        peerDevice = SoftDevices.createLoopback("bench-peer-" + NEXT_PEER.incrementAndGet());
        a = new Side(Verbs.open(SoftDevices.DEFAULT_NAME), arena, bufferBytes, sqDepth, rqDepth);
        b = new Side(peerDevice.open(), arena, bufferBytes, sqDepth, rqDepth);
        PreparedQueuePair pa = prepare(a);
        PreparedQueuePair pb = prepare(b);
        pa.handshake(pb.endpoint());
        pb.handshake(pa.endpoint());
    }

    /** The guided bring-up to INIT: GID index 1, MTU {@value #MTU_BYTES}, 16 READs/atomics each way, PSN 0. */
    private static PreparedQueuePair prepare(Side self) {
        QueuePair q = self.qp;
        return self.pd.queuePair(QpType.RC, self.sendCq).recvCq(self.recvCq).gidIndex(1)
                .mtu(Mtu.ofBytes(MTU_BYTES)).access(ALL_ACCESS).maxRdAtomic(16).maxDestRdAtomic(16).minRnrTimer(1)
                .timeout(TIMEOUT).retryCnt(7).rnrRetry(7).psn(0).prepare(q);
    }

    /**
     * Spins until {@code cq} yields one completion and checks it succeeded (control path and
     * verification; gives up after 10 s so a broken device fails the run instead of hanging it).
     */
    static WorkCompletion awaitOne(CompletionQueue cq, WorkCompletion[] wc) {
        long end = System.nanoTime() + 10_000_000_000L;
        int spins = 0;
        while (cq.poll(wc, 1) == 0) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("no completion within 10 s");
            }
            spins = Backoff.idle(spins);
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("completion failed: " + wc[0]);
        }
        return wc[0];
    }

    /** Throws unless {@code ok}: a benchmark that moved no data must fail, not report a number. */
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("verification failed: " + what);
        }
    }

    @Override
    public void close() {
        try {
            b.close();
            a.close();
        } finally {
            SoftDevices.remove(peerDevice);
            arena.close();
        }
    }
}

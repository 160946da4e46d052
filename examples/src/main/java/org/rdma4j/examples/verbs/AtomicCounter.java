// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.verbs;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.verbs.*;

/**
 * Remote atomics: several RC QPs, each driven by its own thread, increment one 8-byte counter in the
 * owner's memory region with FETCH_AND_ADD, and every old value comes back exactly once. Then they
 * take turns on a word guarded by a spin lock built from COMPARE_AND_SWAP (acquire 0 -> id, release
 * id -> 0), reading and writing it with plain RDMA READ and WRITE while they hold the lock.
 */
public final class AtomicCounter {
    static final int WORKERS = 4;
    static final int ADDS = 500;                  // FETCH_AND_ADDs per worker
    static final int LOCKED = 50;                 // lock-protected increments per worker
    static final int COUNTER = 0, LOCK = 8, GUARDED = 16;   // offsets in the owner's region, 8-byte aligned
    static final long TIMEOUT_NS = 5_000_000_000L;

    public static void main(String[] args) throws Exception {
        try {
            run(Ends.parse(args), System.out);
        } catch (IllegalArgumentException e) {
            System.err.println("usage: AtomicCounter " + Ends.USAGE + " (" + e.getMessage() + ")");
            System.exit(2);
        }
    }

    static void run(Ends ends, PrintStream out) throws Exception {
        try (Arena arena = Arena.ofShared();
             // the owner: ibv_open_device, ibv_alloc_pd, ibv_create_cq, and ibv_reg_mr with IBV_ACCESS_REMOTE_ATOMIC
             Context ownerCtx = Verbs.open(ends.second());
             ProtectionDomain ownerPd = ownerCtx.allocPd();
             CompletionQueue ownerCq = ownerCtx.createCq(WORKERS);
             MemoryRegion shared = ownerPd.regMr(arena.allocate(24, 8),
                     Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC);
             // the workers' side: one region with 16 bytes per worker for returned values and READ data
             Context ctx = Verbs.open(ends.first());
             ProtectionDomain pd = ctx.allocPd();
             MemoryRegion local = pd.regMr(arena.allocate(WORKERS * 16L, 8), Access.LOCAL_WRITE)) {
            List<Worker> workers = new ArrayList<>();
            try {
                for (int w = 0; w < WORKERS; w++) {
                    workers.add(new Worker(w, ctx, pd, local, ownerPd, ownerCq, shared));
                }
                AtomicIntegerArray seen = new AtomicIntegerArray(WORKERS * ADDS);  // times each old value came back
                AtomicLong taken = new AtomicLong();                               // CAS that found the lock held
                try (ExecutorService pool = Executors.newFixedThreadPool(WORKERS)) {
                    List<Future<?>> done = new ArrayList<>();
                    for (Worker w : workers) {
                        done.add(pool.submit(() -> w.work(seen, taken)));
                    }
                    for (Future<?> f : done) {
                        f.get();                                                    // a worker's failure, if any
                    }
                }
                long counter = shared.segment().get(ValueLayout.JAVA_LONG, COUNTER);
                long guarded = shared.segment().get(ValueLayout.JAVA_LONG, GUARDED);
                for (int v = 0; v < seen.length(); v++) {
                    if (seen.get(v) != 1) {
                        throw new IllegalStateException("old value " + v + " came back " + seen.get(v) + " times");
                    }
                }
                if (counter != WORKERS * ADDS || guarded != WORKERS * LOCKED) {
                    throw new IllegalStateException("counter " + counter + ", guarded word " + guarded
                            + ": lost updates");
                }
                out.printf("counter = %d: %d QPs x %d FETCH_AND_ADD, each old value 0..%d returned once%n",
                        counter, WORKERS, ADDS, counter - 1);
                out.printf("guarded = %d: %d QPs x %d READ+WRITE under a COMPARE_AND_SWAP lock"
                        + " (%d CAS found it held)%n",
                        guarded, WORKERS, LOCKED, taken.get());
            } finally {
                workers.forEach(Worker::close);
            }
        }
    }

    /** One RC QP on the workers' side connected to one on the owner's, with its own CQ and 16 local bytes. */
    private static final class Worker implements AutoCloseable {
        private final long id;
        private final long slot;                  // local[slot]: returned old value; local[slot + 8]: READ data
        private final MemoryRegion local;
        private final long remote;                // the owner's region: address and rkey, as told out of band
        private final int rkey;
        private final CompletionQueue cq;
        private final PreparedQueuePair mine;
        private final PreparedQueuePair theirs;
        private final CqPoller completions;
        private final SendWorkRequest wr = new SendWorkRequest();

        Worker(int index, Context ctx, ProtectionDomain pd, MemoryRegion local, ProtectionDomain ownerPd,
                CompletionQueue ownerCq, MemoryRegion shared) {
            id = index + 1;
            slot = index * 16L;
            this.local = local;
            remote = shared.address();
            rkey = shared.rkey();
            cq = ctx.createCq(4);
            // ibv_create_qp(IBV_QPT_RC) on both sides; INIT with IBV_ACCESS_REMOTE_ATOMIC, RTR with
            // max_dest_rd_atomic, RTS with max_rd_atomic (the builder's defaults: the device's limits)
            mine = pd.queuePair(QpType.RC, cq).prepare();
            theirs = ownerPd.queuePair(QpType.RC, ownerCq).prepare();
            mine.handshake(theirs.endpoint());
            theirs.handshake(mine.endpoint());
            completions = new CqPoller(cq);
        }

        void work(AtomicIntegerArray seen, AtomicLong taken) {
            for (int i = 0; i < ADDS; i++) {
                seen.incrementAndGet((int) post(wr.clear().fetchAdd(remote + COUNTER, rkey, 1).sge(local, slot, 8)));
            }
            for (int i = 0; i < LOCKED; i++) {
                while (post(wr.clear().compareAndSwap(remote + LOCK, rkey, 0, id).sge(local, slot, 8)) != 0) {
                    taken.incrementAndGet();      // held by another worker: try again
                }
                post(wr.clear().read(remote + GUARDED, rkey).sge(local, slot + 8, 8));
                long value = local.segment().get(ValueLayout.JAVA_LONG, slot + 8);
                local.segment().set(ValueLayout.JAVA_LONG, slot + 8, value + 1);
                post(wr.clear().write(remote + GUARDED, rkey).sge(local, slot + 8, 8));
                if (post(wr.clear().compareAndSwap(remote + LOCK, rkey, id, 0).sge(local, slot, 8)) != id) {
                    throw new IllegalStateException("worker " + id + " released a lock it did not hold");
                }
            }
        }

        /** ibv_post_send of one signaled request, ibv_poll_cq for its completion; returns local[slot]. */
        private long post(SendWorkRequest request) {
            mine.qp().postSend(request.wrId(id).flags(SendFlag.SIGNALED));
            completions.takeSuccess(TIMEOUT_NS);
            return local.segment().get(ValueLayout.JAVA_LONG, slot);   // an atomic's original value lands here
        }

        @Override
        public void close() {
            mine.close();                         // ibv_destroy_qp
            theirs.close();
            cq.close();                           // ibv_destroy_cq
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fastest a shared-memory ring can move 64 KiB messages from one core to another, the floor for
 * the shm link's write_bw: a producer thread copies each message from its own buffer into the next
 * slot of a ring and publishes it, a consumer thread on the other core copies it out into its own
 * buffer and frees the slot; both spin (no wake-ups, no headers, no ICRC, no ACKs). The two copies and
 * the cache lines moving between the cores are what is left of any design that copies through shared
 * memory. Printed beside single-thread in-cache memcpy of the same size, measured in the same run,
 * the baseline of issue 11's target (shm write_bw at least 50 % of it).
 * {@snippet :
 * java -cp bench/target/benchmarks.jar org.rdma4j.bench.RingCopyFloor 3       # rounds (default 3)
 * }
 * Two threads of one process map the ring's pages just as two processes would: the cost measured is
 * the copies and the coherence traffic, which do not depend on the page tables.
 */
public final class RingCopyFloor {
    private static final int SIZE = 65536;
    /** Ring sizes tried, in slots of {@link #SIZE}: 16 is the shm link's lane (256 slots of 4 KiB). */
    private static final int[] RING_SLOTS = {4, 16};
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private RingCopyFloor() {}

    public static void main(String[] args) throws InterruptedException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        for (int r = 0; r < rounds; r++) {
            double memcpy = memcpy(seconds);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "memcpy %d B (one thread): %.2f GB/s",
                    SIZE, memcpy / 1e9));
            for (int slots : RING_SLOTS) {
                double ring = ring(slots, seconds);
                line.append(String.format(Locale.ROOT, "   ring of %d x %d KiB, two threads: %.2f GB/s = %.3f of memcpy",
                        slots, SIZE / 1024, ring / 1e9, ring / memcpy));
            }
            System.out.println(line);
        }
    }

    private static double memcpy(double seconds) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(SIZE, 4096);
            MemorySegment dst = arena.allocate(SIZE, 4096);
            long n = 0;
            long t0 = System.nanoTime();
            long end = t0 + (long) (seconds * 1e9);
            long now;
            do {
                for (int i = 0; i < 64; i++) {
                    MemorySegment.copy(src, 0, dst, 0, SIZE);
                }
                n += 64;
            } while ((now = System.nanoTime()) < end);
            return (double) n * SIZE / ((now - t0) / 1e9);
        }
    }

    /** Bytes per second through a ring of {@code slots} slots: each slot a sequence word, then the message. */
    private static double ring(int slots, double seconds) throws InterruptedException {
        long slotBytes = 64 + SIZE;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ring = arena.allocate(slotBytes * slots, 4096);
            MemorySegment src = arena.allocate(SIZE, 4096);
            MemorySegment dst = arena.allocate(SIZE, 4096);
            AtomicLong produced = new AtomicLong(-1);
            long[] consumedAt = new long[1];
            Thread consumer = Thread.ofPlatform().start(() -> {
                for (long m = 0; ; m++) {
                    long at = (m % slots) * slotBytes;
                    int spins = 0;
                    while ((long) LONG.getAcquire(ring, at) != m + 1) {
                        long last = produced.get();
                        if (last >= 0 && m >= last) {
                            consumedAt[0] = System.nanoTime();
                            return;
                        }
                        spins = Backoff.idle(spins);
                    }
                    MemorySegment.copy(ring, at + 64, dst, 0, SIZE);
                    LONG.setRelease(ring, at, -(m + 1)); // free
                }
            });
            long t0 = System.nanoTime();
            long end = t0 + (long) (seconds * 1e9);
            long m = 0;
            for (; (m & 63) != 0 || System.nanoTime() < end; m++) {
                long at = (m % slots) * slotBytes;
                long freeWhen = m < slots ? 0 : -(m - slots + 1);
                int spins = 0;
                while ((long) LONG.getAcquire(ring, at) != freeWhen) {
                    spins = Backoff.idle(spins);
                }
                MemorySegment.copy(src, 0, ring, at + 64, SIZE);
                LONG.setRelease(ring, at, m + 1);
            }
            long total = m;
            produced.set(total);
            consumer.join();
            return (double) total * SIZE / ((consumedAt[0] - t0) / 1e9);
        }
    }
}

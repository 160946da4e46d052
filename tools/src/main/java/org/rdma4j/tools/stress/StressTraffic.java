// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;

/**
 * What the two ends of a two-JVM stress run agree on without telling each other: the byte pattern of
 * every message, the running hash over what arrives, the start values of the atomics' words and the
 * QP attributes. The pattern and the QP attributes are the in-process workload's
 * ({@link StressWorkload}), so both modes exercise the same transport paths.
 * Stateless.
 */
final class StressTraffic {
    /** Work requests in flight per queue pair (the in-process workload's depth). */
    static final int DEPTH = 8;
    /** Receives the server keeps posted per queue pair. */
    static final int RECV_DEPTH = DEPTH * 2;
    /** Largest SGE list a message uses. */
    static final int MAX_SGES = 4;
    /** The shared FETCH_ADD counter's value before the run. */
    static final long COUNTER_START = 1000;
    /** No progress for this long is a stall, on either side. */
    static final long STALL_NANOS = 60_000_000_000L;
    /** Every access right, for the server's regions and both sides' QPs. */
    static final int ALL_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ
            | Access.REMOTE_ATOMIC;

    private StressTraffic() {
    }

    /** Byte {@code offset} of message {@code seq}: the in-process workload's formula. */
    static byte pattern(long seq, long offset) {
        return StressWorkload.pattern(seq, offset);
    }

    /**
     * Whether {@code len} bytes at {@code base} of {@code s} are bytes {@code offset ..} of message
     * {@code seq}'s pattern.
     */
    static boolean matches(MemorySegment s, long base, long seq, int offset, int len) {
        for (int j = 0; j < len; j++) {
            if (s.get(ValueLayout.JAVA_BYTE, base + j) != pattern(seq, offset + j)) {
                return false;
            }
        }
        return true;
    }

    /**
     * A random message length up to {@code maxSize}: a fifth of them 0..8 bytes, two fifths up to four
     * MTUs, the rest anything.
     */
    static int randomLength(SplittableRandom random, int maxSize, int mtu) {
        int r = random.nextInt(10);
        if (r < 2) {
            return random.nextInt(9); // 0..8
        }
        if (r < 6) {
            return random.nextInt(Math.min(maxSize, 4 * mtu) + 1);
        }
        return random.nextInt(maxSize + 1);
    }

    /**
     * The poll loops' idle step: spin a little after an empty poll, then park briefly, leaving the CPU
     * to the device's threads (this box may have 2 cores). Returns the new idle count.
     */
    static int idle(int idle, int polled) {
        if (polled != 0) {
            return 0;
        }
        if (++idle > 64) {
            LockSupport.parkNanos(20_000);
        } else {
            Thread.onSpinWait();
        }
        return idle;
    }

    /** The "sequence number" whose pattern fills queue pair {@code pair}'s RDMA READ source. */
    static long readSourceSeq(int pair) {
        return 1_000_000L + pair;
    }

    /** The value of queue pair {@code pair}'s CMP_SWAP word before the run. */
    static long casStart(int pair) {
        return 500_000L * (pair + 1);
    }

    /**
     * Folds one receive completion into a queue pair's running hash. Order matters, so a receive that
     * is lost, repeated or swapped with another changes the result.
     */
    static long fold(long hash, long seq, int byteLen, boolean withWrite) {
        long x = Long.rotateLeft(hash, 23) ^ (seq * 0x9E3779B97F4A7C15L) ^ ((long) byteLen << 1 | (withWrite ? 1 : 0));
        x *= 0xBF58476D1CE4E5B9L;
        return x ^ (x >>> 31);
    }

    /** The first PSN of queue pair {@code qpn}: just below the 24-bit wrap, so every run crosses it. */
    static int firstPsn(int qpn) {
        return 0xFFFFF0 + Integer.remainderUnsigned(qpn, 8);
    }

    /**
     * Splits {@code length} bytes into 1..{@value #MAX_SGES} pieces: piece i is
     * {@code cuts[i] .. cuts[i + 1]}. Returns the number of pieces. Allocation free.
     */
    static int split(SplittableRandom random, int length, int[] cuts) {
        int pieces = length < MAX_SGES ? 1 : 1 + random.nextInt(MAX_SGES);
        cuts[0] = 0;
        cuts[pieces] = length;
        for (int i = 1; i < pieces; i++) {
            cuts[i] = random.nextInt(length + 1);
        }
        Arrays.sort(cuts, 1, pieces);
        return pieces;
    }

    /**
     * Local ACK timeout exponent: 4.096 us * 2^14 = 67 ms, ibv_rc_pingpong's. The in-process run's 12
     * (17 ms) gives up too soon here: seven timeouts without progress while the other JVM is still
     * compiling its receive path end the run with RETRY_EXC_ERR.
     */
    static final int ACK_TIMEOUT = 14;

    /**
     * The guided bring-up of every stress queue pair, on both ends: the side's GID index (1, a --bind
     * device's address, unless -g says otherwise),
     * the run's MTU, {@link #DEPTH} READs/atomics each way, RNR timer 1, {@link #ACK_TIMEOUT}, and
     * the first PSN {@link #firstPsn} of {@code qp}. Moves {@code qp} (in RESET) to INIT.
     */
    static PreparedQueuePair prepare(QueuePair qp, int mtu, int gidIndex) {
        return new QueuePairBuilder(qp.pd(), QpType.RC, qp.sendCq(), qp.recvCq()).gidIndex(gidIndex).mtu(Mtu.ofBytes(mtu))
                .access(ALL_ACCESS).maxRdAtomic(DEPTH).maxDestRdAtomic(DEPTH).minRnrTimer(1).timeout(ACK_TIMEOUT)
                .retryCnt(7).rnrRetry(7).psn(firstPsn(qp.qpn())).prepare(qp);
    }
}

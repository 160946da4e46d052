// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Deth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;
import org.rdma4j.verbs.spi.GsiResponder;

/**
 * QP1 of the device's port (the general services interface): 256-byte MADs as UD SEND_ONLY from QPN 1
 * to QPN 1 with the GSI Q_Key. It is not a {@link QpEngine} (no receive WQEs, no CQ): a datagram to QPN
 * 1 is checked as rxe checks one (P_Key in the default partition, Q_Key 0x80010000) and as the kernel's
 * MAD layer would take it (exactly one MAD of payload), and copied into a bounded queue of MAD slots
 * that the one open {@link GsiPort} reads. Anything else is dropped and counted: a bad P_Key
 * ({@link Counter#BAD_PKEY}), a bad Q_Key ({@link Counter#BAD_QKEY}), another opcode
 * ({@link Counter#MALFORMED}), another length ({@link Counter#GSI_LENGTH_DROPS}), no port open
 * ({@link Counter#GSI_NO_PORT_DROPS}; the installed {@link GsiResponder} may answer it,
 * {@link Counter#GSI_UNCLAIMED_ANSWERS}), a full queue ({@link Counter#GSI_OVERFLOW_DROPS}).
 * <p>
 * The delivering threads (the link's receive path, or a sender's thread on the in-process fabric) copy
 * into the queue and unpark the receiver; there is no thread of its own. Neither direction allocates
 * per MAD. Thread safe: any number of delivering and sending threads, one receiver at a time.
 */
public final class Gsi {
    /** The QP number of the GSI. */
    public static final int QPN = 1;
    /** Every MAD is this long. */
    public static final int MAD_SIZE = GsiPort.MAD_SIZE;
    /** The Q_Key of QP1. */
    public static final int QKEY = GsiPort.GSI_QKEY;
    /** MADs waiting for the receiver at most; more are dropped, as a UD QP without receives drops them. */
    public static final int CAPACITY = 256;

    private final Hca hca;
    private final Object lock = new Object();
    /** CAPACITY slots of MAD_SIZE bytes, made at the first open (guarded by lock). */
    private MemorySegment slots;
    private final Gid[] fromGid = new Gid[CAPACITY];
    private final int[] fromQpn = new int[CAPACITY];
    private final int[] fromPkey = new int[CAPACITY];
    /** Queue positions (guarded by lock): slots [head, tail) hold MADs. */
    private long head;
    private long tail;
    /** Whether a port is open, and which opening it is: a closed port's receiver must not read the next one's. */
    private boolean open;
    private int generation;
    /** The receiver parked for a MAD (guarded by lock). */
    private Thread waiter;
    /** Scratch for {@link #answerUnclaimed}: the MAD and the answer (guarded by unclaimedLock). */
    private final Object unclaimedLock = new Object();
    private MemorySegment unclaimedIn;
    private final GsiPort.Source unclaimedFrom = new GsiPort.Source();
    /** The PSN of the next MAD sent (UD receivers ignore it; it only makes captures readable). */
    private final AtomicInteger psn = new AtomicInteger();

    Gsi(Hca hca) {
        this.hca = hca;
    }

    /** Opens the port: returns its token for {@link #take} and {@link #close}, or -1 if one is open already. */
    public int open() {
        synchronized (lock) {
            if (open) {
                return -1;
            }
            if (slots == null) {
                slots = Arena.ofAuto().allocate((long) CAPACITY * MAD_SIZE, 8);
            }
            open = true;
            head = 0;
            tail = 0;
            return ++generation;
        }
    }

    /** Closes the port opened as {@code token}: queued MADs are dropped and a waiting receiver wakes (EBADF). */
    public void close(int token) {
        Thread w;
        synchronized (lock) {
            if (!open || generation != token) {
                return;
            }
            open = false;
            generation++;
            java.util.Arrays.fill(fromGid, null);
            head = 0;
            tail = 0;
            w = waiter;
            waiter = null;
        }
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** Whether a port is open (tests, diagnostics). */
    public boolean isOpen() {
        synchronized (lock) {
            return open;
        }
    }

    /** MADs queued for the receiver (tests, diagnostics). */
    public int queued() {
        synchronized (lock) {
            return (int) (tail - head);
        }
    }

    /**
     * A packet to QPN 1 arrived (any delivering thread): checked, copied into the queue or dropped and
     * counted; released either way. Never throws.
     */
    void receive(Packet p) {
        try {
            MemorySegment b = p.buffer;
            int op = Bth.opcodeOf(b);
            if (op != Opcode.UD_SEND_ONLY || p.headerLength < Opcode.headerLength(op) || Bth.tverOf(b) != 0
                    || p.burstPackets != 1) {
                hca.counters.inc(Counter.MALFORMED);
                return;
            }
            int pkey = Bth.pkeyOf(b);
            if ((pkey & 0x7FFF) != 0x7FFF) { // rxe: the default partition only, limited or full member
                hca.counters.inc(Counter.BAD_PKEY);
                return;
            }
            int dethAt = Opcode.offsetOf(op, Opcode.HEADER_DETH);
            if (Deth.qkeyAt(b, dethAt) != QKEY) {
                hca.counters.inc(Counter.BAD_QKEY);
                return;
            }
            if (p.payloadLength != MAD_SIZE) {
                hca.counters.inc(Counter.GSI_LENGTH_DROPS);
                return;
            }
            Thread w;
            boolean unclaimed;
            synchronized (lock) {
                unclaimed = !open;
                if (unclaimed) {
                    hca.counters.inc(Counter.GSI_NO_PORT_DROPS);
                } else if (tail - head == CAPACITY) {
                    hca.counters.inc(Counter.GSI_OVERFLOW_DROPS);
                    return;
                } else {
                    int i = (int) (tail % CAPACITY);
                    p.copyPayload(0, slots, (long) i * MAD_SIZE, MAD_SIZE);
                    fromGid[i] = p.srcGid;
                    fromQpn[i] = Deth.srcQpnAt(b, dethAt);
                    fromPkey[i] = pkey;
                    tail++;
                }
                w = waiter;
            }
            if (unclaimed) {
                answerUnclaimed(p, pkey, Deth.srcQpnAt(b, dethAt));
                return;
            }
            if (w != null) {
                LockSupport.unpark(w);
            }
        } catch (IllegalStateException e) {
            hca.counters.inc(Counter.FREED_MEMORY); // the sender's memory went away under the copy
        } catch (IndexOutOfBoundsException e) {
            hca.counters.inc(Counter.MALFORMED);
        } finally {
            p.release();
        }
    }

    /**
     * A MAD for a port nobody has open: the installed {@link GsiResponder} (the cm module's, when it is
     * present) may answer it, as the kernel's ib_cm answers a REQ nobody listens for. One at a time per
     * device (the scratch buffers); the answer goes out on this thread. The monitor is reentrant: an
     * answer delivered in-process to this same device re-enters only after its bytes were copied.
     */
    private void answerUnclaimed(Packet p, int pkey, int srcQpn) {
        GsiResponder r = GsiResponder.installed();
        Gid local = p.dstGid;
        if (r == null || local == null || p.srcGid == null) {
            return;
        }
        synchronized (unclaimedLock) {
            if (unclaimedIn == null) {
                unclaimedIn = Arena.ofAuto().allocate(2L * MAD_SIZE, 8);
            }
            MemorySegment in = unclaimedIn.asSlice(0, MAD_SIZE);
            MemorySegment out = unclaimedIn.asSlice(MAD_SIZE, MAD_SIZE);
            p.copyPayload(0, in, 0, MAD_SIZE);
            unclaimedFrom.gid = p.srcGid;
            unclaimedFrom.qpn = srcQpn;
            unclaimedFrom.pkey = pkey;
            boolean reply;
            try {
                reply = r.answer(in, unclaimedFrom, out);
            } catch (RuntimeException e) {
                reply = false; // a responder must not throw; if it does, the MAD is only dropped
            }
            if (reply) {
                // Counted before it leaves: the requester may act on the answer (and read the counter)
                // before this thread is back from the send.
                hca.counters.inc(Counter.GSI_UNCLAIMED_ANSWERS);
                send(out, local, unclaimedFrom.gid, pkey);
            }
        }
    }

    /**
     * Takes the next MAD for the port opened as {@code token} into {@code mad}, waiting up to
     * {@code timeoutNs}; false when none came in time (or the waiting thread was interrupted: its
     * interrupt status stays set). EBADF when the port is closed before or during the wait; EBUSY when
     * another thread is waiting already.
     */
    public boolean take(int token, MemorySegment mad, GsiPort.Source from, long timeoutNs) {
        Thread me = Thread.currentThread();
        long deadline = timeoutNs > 0 ? System.nanoTime() + Math.min(timeoutNs, Long.MAX_VALUE >> 2) : 0;
        while (true) {
            long left;
            synchronized (lock) {
                if (!open || generation != token) {
                    if (waiter == me) {
                        waiter = null;
                    }
                    throw new VerbsException(Errno.EBADF, "QP1 of " + hca.name + " is closed");
                }
                if (tail != head) {
                    int i = (int) (head % CAPACITY);
                    MemorySegment.copy(slots, (long) i * MAD_SIZE, mad, 0, MAD_SIZE);
                    from.gid = fromGid[i];
                    from.qpn = fromQpn[i];
                    from.pkey = fromPkey[i];
                    fromGid[i] = null;
                    head++;
                    if (waiter == me) {
                        waiter = null;
                    }
                    return true;
                }
                left = timeoutNs > 0 ? deadline - System.nanoTime() : 0;
                if (left <= 0 || me.isInterrupted()) {
                    if (waiter == me) {
                        waiter = null;
                    }
                    return false;
                }
                if (waiter != null && waiter != me) {
                    throw new VerbsException(Errno.EBUSY, "another thread is receiving on QP1 of " + hca.name);
                }
                waiter = me;
            }
            LockSupport.parkNanos(this, left);
        }
    }

    /**
     * Sends one MAD ({@link #MAD_SIZE} bytes of {@code mad}) from QP1, GID {@code src}, to QP1 of the port
     * owning {@code dest}, with P_Key {@code pkey}: a UD SEND_ONLY through the device's link, as a user
     * UD QP's datagram goes (the link adds the IP/UDP headers and the ICRC). Fire and forget.
     */
    public void send(MemorySegment mad, Gid src, Gid dest, int pkey) {
        Packet p = hca.packets.acquire();
        try {
            MemorySegment b = p.buffer;
            int op = Opcode.UD_SEND_ONLY;
            Bth.writeAt(b, 0, op, false, 0, pkey, QPN, false, psn.getAndIncrement() & 0xFF_FFFF);
            Deth.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_DETH), QKEY, QPN);
            p.headerLength = Opcode.headerLength(op);
            MemorySegment.copy(mad, 0, b, p.headerLength, MAD_SIZE);
            p.setFlatPayload(MAD_SIZE);
            p.srcGid = src;
            p.dstGid = dest;
            p.hopLimit = Packet.DEFAULT_HOP_LIMIT;
            p.trafficClass = 0;
            p.flowLabel = 0;
        } catch (RuntimeException e) {
            p.release();
            throw e;
        }
        hca.send(p);
    }
}

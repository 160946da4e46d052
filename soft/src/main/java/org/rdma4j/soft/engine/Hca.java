package org.rdma4j.soft.engine;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.link.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;

/**
 * The soft device's "hardware": its QP table, key table, counters, packet pool, the link packets leave
 * by, and one timer thread for ACK timeouts and RNR waits. Everything on the data path is run by the
 * threads that post, poll or deliver (QP tasks); the timer thread only runs tasks whose timers
 * expired. Thread safe.
 */
public final class Hca implements PacketSink {
    /** First QP number handed out (0 and 1 are the special QPs). */
    public static final int FIRST_QPN = 0x11;
    public static final int MAX_QP = 1 << 16;

    private static final ThreadLocal<Icrc> ICRC = ThreadLocal.withInitial(Icrc::new);

    public final String name;
    public final long guid;
    private final Gid[] gids;
    public final KeyTable keys = new KeyTable();
    public final Counters counters = new Counters();
    public final PacketPool packets = new PacketPool();
    /** Makes atomics atomic against other atomics on this device. */
    public final Object atomicLock = new Object();
    private final AtomicReferenceArray<QpEngine> qps = new AtomicReferenceArray<>(MAX_QP);
    private int nextQpSlot;
    private volatile Link link;
    /** Port 1's carrier: while false, nothing is sent or received (see {@link #setPortUp}). */
    private volatile boolean portUp = true;
    private final CopyOnWriteArrayList<QpEngine> timed = new CopyOnWriteArrayList<>();
    /** {@link #timed} as an array, republished on every change: the progress loop walks it without allocating. */
    private volatile QpEngine[] timedSnapshot = new QpEngine[0];
    /**
     * How long the progress thread sleeps when a QP's timer is due but its task is running on
     * another thread (which will run the timer work before it goes idle): short, so a stalled
     * thread gets the core instead of a spinning progress thread.
     */
    private static final long BUSY_RETRY_NS = 20_000L;
    private final java.util.concurrent.ConcurrentLinkedQueue<QpEngine> deferred =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final Thread timerThread;
    private volatile long plannedWakeNs = Long.MAX_VALUE;
    private volatile boolean closed;
    /** The destination QPN of a multicast packet. */
    public static final int MULTICAST_QPN = 0xFFFFFF;
    /** Multicast groups: the QPs attached to each, as arrays (copy on write) read without locks. */
    private final java.util.concurrent.ConcurrentHashMap<Gid, QpEngine[]> groups =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** QP attachments over all groups (guarded by {@code groups}). */
    private int attachments;
    /** QPs with packets queued in the current receive batch (used by the link's receive thread only). */
    private final QpEngine[] batch = new QpEngine[64];
    private int batchSize;

    public Hca(String name, long guid, Gid[] gids) {
        this.name = name;
        this.guid = guid;
        this.gids = gids.clone();
        timerThread = Thread.ofPlatform().daemon().name("rdma4j-" + name + "-progress").unstarted(this::timerLoop);
        timerThread.start();
    }

    public void setLink(Link l) {
        link = l;
    }

    public Link link() {
        return link;
    }

    public int gidCount() {
        return gids.length;
    }

    public Gid gid(int index) {
        return index >= 0 && index < gids.length ? gids[index] : null;
    }

    /** Registers a QP and returns its number, or -1 if the table is full. */
    public synchronized int addQp(QpEngine qp) {
        for (int i = 0; i < MAX_QP; i++) {
            int slot = (nextQpSlot + i) % MAX_QP;
            if (qps.get(slot) == null) {
                qps.set(slot, qp);
                nextQpSlot = slot + 1;
                timed.add(qp);
                timedSnapshot = timed.toArray(new QpEngine[0]);
                return FIRST_QPN + slot;
            }
        }
        return -1;
    }

    /**
     * The next QP created gets number {@code qpn} if it is free: QP numbers come back once the table
     * wraps; tests use this to meet a reused number without creating 65536 QPs.
     */
    public synchronized void nextQpnHint(int qpn) {
        nextQpSlot = Math.floorMod(qpn - FIRST_QPN, MAX_QP);
    }

    public synchronized void removeQp(int qpn) {
        QpEngine qp = qps.getAndSet(qpn - FIRST_QPN, null);
        if (qp != null) {
            timed.remove(qp);
            timedSnapshot = timed.toArray(new QpEngine[0]);
        }
    }

    public QpEngine qp(int qpn) {
        int slot = qpn - FIRST_QPN;
        return slot >= 0 && slot < MAX_QP ? qps.get(slot) : null;
    }

    /** All live QPs (control path: deregistration checks). */
    public Iterable<QpEngine> allQps() {
        return timed;
    }

    /** Whether the link has received packets it has not delivered yet (see {@link Link#receiveBacklogged()}). */
    public boolean receiveBacklogged() {
        Link l = link;
        return l != null && l.receiveBacklogged();
    }

    /**
     * Attaches {@code qp} to multicast {@code group} (nothing if it is already): checks the device's
     * limits in rxe's order (groups, then attachments in all, then QPs in this group) and joins the
     * group on the link when it is new here. ENOMEM past a limit; the link's failure as EINVAL.
     */
    public void attachMcast(Gid group, QpEngine qp, int maxGroups, int maxTotal, int maxPerGroup) {
        synchronized (groups) {
            QpEngine[] members = groups.get(group);
            if (members != null) {
                for (QpEngine m : members) {
                    if (m == qp) {
                        return;
                    }
                }
            }
            if (members == null && groups.size() >= maxGroups) {
                throw new VerbsException(Errno.ENOMEM, name + " already has max_mcast_grp " + maxGroups
                        + " multicast groups");
            }
            if (attachments >= maxTotal) {
                throw new VerbsException(Errno.ENOMEM, name + " already has max_total_mcast_qp_attach "
                        + maxTotal + " multicast attachments");
            }
            if (members != null && members.length >= maxPerGroup) {
                throw new VerbsException(Errno.ENOMEM, "group " + group + " already has max_mcast_qp_attach "
                        + maxPerGroup + " QPs");
            }
            if (members == null) {
                Link l = link;
                try {
                    if (l == null) {
                        throw new java.io.IOException("the device has no link");
                    }
                    l.joinGroup(group);
                } catch (java.io.IOException e) {
                    throw new VerbsException(Errno.EINVAL, "cannot join multicast group " + group + ": "
                            + e.getMessage());
                }
                members = new QpEngine[0];
            }
            QpEngine[] more = java.util.Arrays.copyOf(members, members.length + 1);
            more[members.length] = qp;
            groups.put(group, more);
            attachments++;
        }
    }

    /** Detaches {@code qp} from {@code group}; false if it was not attached. Leaves the group when empty. */
    public boolean detachMcast(Gid group, QpEngine qp) {
        synchronized (groups) {
            QpEngine[] members = groups.get(group);
            if (members == null) {
                return false;
            }
            QpEngine[] fewer = java.util.Arrays.stream(members).filter(m -> m != qp).toArray(QpEngine[]::new);
            if (fewer.length == members.length) {
                return false;
            }
            attachments--;
            if (fewer.length == 0) {
                groups.remove(group);
                Link l = link;
                if (l != null) {
                    l.leaveGroup(group);
                }
            } else {
                groups.put(group, fewer);
            }
            return true;
        }
    }

    /** Sets port 1 up or down; returns false if it already was. Going down counts {@link Counter#LINK_DOWNED}. */
    public synchronized boolean setPortUp(boolean up) {
        if (portUp == up) {
            return false;
        }
        portUp = up;
        if (!up) {
            counters.inc(Counter.LINK_DOWNED);
        }
        return true;
    }

    public boolean portUp() {
        return portUp;
    }

    /**
     * Sends a packet through the link. While the port is down the packet is counted and dropped, as
     * rxe's packets are when its netdev has no carrier (the transmit itself succeeds).
     */
    public void send(Packet p) {
        counters.inc(Counter.SENT_PKTS);
        Link l = link;
        if (l == null || !portUp) {
            p.release();
            return;
        }
        if (!p.payloadAlive()) {
            // The sender's memory was freed after the gather (a race with Arena.close): the packet is
            // lost; a retransmission gathers again and fails locally.
            counters.inc(Counter.FREED_MEMORY);
            p.release();
            return;
        }
        try {
            l.send(p);
        } catch (IllegalStateException e) {
            counters.inc(Counter.FREED_MEMORY); // freed while the link copied it: lost, as above
        }
    }

    /** The receive path: validate the BTH basics and dispatch on the destination QPN. */
    @Override
    public void receive(Packet p) {
        if (!check(p)) {
            return;
        }
        if (Bth.destQpnOf(p.buffer) == MULTICAST_QPN) {
            multicast(p, false);
            return;
        }
        QpEngine qp = lookup(p);
        if (qp != null) {
            qp.inbound(p);
        }
    }

    /**
     * The batched receive path (one link receive thread): queue on the QP now, run its task once at
     * {@link #endBatch()}, so a burst for one QP is handled in one pass.
     */
    @Override
    public void receiveInBatch(Packet p) {
        if (!check(p)) {
            return;
        }
        if (Bth.destQpnOf(p.buffer) == MULTICAST_QPN) {
            multicast(p, true);
            return;
        }
        QpEngine qp = lookup(p);
        if (qp != null) {
            queueInBatch(qp, p);
        }
    }

    private void queueInBatch(QpEngine qp, Packet p) {
        if (qp.enqueueInbound(p) && !qp.inBatch) {
            if (batchSize == batch.length) {
                endBatch();
            }
            qp.inBatch = true;
            batch[batchSize++] = qp;
        }
    }

    /**
     * A packet to QPN 0xFFFFFF: a copy to every QP attached to its destination group (the last one gets
     * the packet itself); the QPs check state and Q_Key as for any UD packet.
     */
    private void multicast(Packet p, boolean batched) {
        QpEngine[] members = p.dstGid == null ? null : groups.get(p.dstGid);
        if (members == null || members.length == 0) {
            counters.inc(Counter.MCAST_NO_MEMBER_DROPS);
            p.release();
            return;
        }
        p.materialize();
        for (int i = 0; i < members.length; i++) {
            Packet c = i == members.length - 1 ? p : p.copyTo(packets.acquire());
            if (batched) {
                queueInBatch(members[i], c);
            } else {
                members[i].inbound(c);
            }
        }
    }

    @Override
    public void endBatch() {
        int n = batchSize;
        batchSize = 0;
        for (int i = 0; i < n; i++) {
            QpEngine qp = batch[i];
            batch[i] = null;
            qp.inBatch = false;
            qp.schedule();
        }
    }

    /** Counts and checks a packet; false when it was dropped (and released). */
    private boolean check(Packet p) {
        if (!portUp) { // a port without carrier receives nothing
            p.release();
            return false;
        }
        counters.inc(Counter.RCVD_PKTS);
        if (p.headerLength < 12 || p.buffer.byteSize() < 12) {
            counters.inc(Counter.MALFORMED);
            p.release();
            return false;
        }
        if (p.hasIcrc && !ICRC.get().verifyBthOnward(p.buffer, 0, p.headerLength + p.payloadLength + 4)) {
            counters.inc(Counter.ICRC_ERR);
            p.release();
            return false;
        }
        return true;
    }

    /**
     * The packet's QP, or null when there is none or the packet is not from the QP's connected peer
     * (the packet is then counted and released). The address check runs before any transport state is
     * touched, so a forged packet cannot take a PSN, a receive WQE or the QP's error state.
     */
    private QpEngine lookup(Packet p) {
        int destQpn = Bth.destQpnOf(p.buffer);
        QpEngine qp = qp(destQpn);
        if (qp == null) {
            counters.inc(Counter.UNKNOWN_QPN);
            p.release();
            return null;
        }
        if (!qp.fromConnectedPeer(p)) {
            counters.inc(Counter.BAD_ADDR);
            p.release();
            return null;
        }
        return qp;
    }

    /** Has the progress thread run {@code qp}'s task (used when inline nesting gets too deep). */
    void defer(QpEngine qp) {
        deferred.add(qp);
        LockSupport.unpark(timerThread);
    }

    /** A QP set a timer deadline: wake the timer thread if it plans to sleep past it. */
    public void timerArmed(long deadlineNs) {
        if (deadlineNs < plannedWakeNs) {
            LockSupport.unpark(timerThread);
        }
    }

    private void timerLoop() {
        while (!closed) {
            try {
                progressOnce();
            } catch (Throwable t) {
                // Nothing may stop a device's progress thread; the QP that failed stays as it is.
                counters.inc(Counter.ENGINE_ERRORS);
            }
        }
    }

    private void progressOnce() {
        QpEngine later;
        while ((later = deferred.poll()) != null) {
            later.runTask();
        }
        long now = System.nanoTime();
        long next = now + 50_000_000L;
        for (QpEngine qp : timedSnapshot) {
            long d = qp.nextDeadlineNs();
            if (d <= now) {
                qp.runTask();
                d = qp.nextDeadlineNs();
                if (d <= now) {
                    // Still due: the task is busy on another thread, which goes round again before
                    // it idles. Look back shortly rather than spin on the deadline.
                    d = now + BUSY_RETRY_NS;
                }
            }
            if (d < next) {
                next = d;
            }
        }
        plannedWakeNs = next;
        long wait = next - System.nanoTime();
        if (wait > 0 && deferred.isEmpty()) {
            LockSupport.parkNanos(this, wait);
        }
        plannedWakeNs = Long.MAX_VALUE;
    }

    /** Stops the timer thread and detaches from the link. */
    public void close() {
        closed = true;
        LockSupport.unpark(timerThread);
        Link l = link;
        if (l != null) {
            l.close();
        }
    }
}

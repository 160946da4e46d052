// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.NanoClock;
import org.rdma4j.soft.link.DirectLink;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.link.Route;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.verbs.Gid;

/**
 * The soft device's "hardware": its QP table ({@link QpTable}), key table, multicast groups
 * ({@link McastGroups}), counters, packet pool, port state, the link packets leave by, the dispatch
 * of arriving packets to their QPs (one at a time or in receive batches), and one progress agent for
 * ACK timeouts, RNR waits and deferred tasks. Everything on the data path is run by the threads that
 * post, poll or deliver (QP tasks); the progress agent only runs tasks whose timers expired or that
 * were deferred to it. Time comes from an injected {@link NanoClock}. Thread safe.
 */
public final class Hca implements PacketSink {
    /** First QP number handed out (0 and 1 are the special QPs). */
    public static final int FIRST_QPN = 0x11;
    /** QP numbers a device hands out: 256 Ki (rxe stops at 64 Ki). */
    public static final int MAX_QP = 1 << 18;

    private static final ThreadLocal<Icrc> ICRC = ThreadLocal.withInitial(Icrc::new);

    public final String name;
    public final long guid;
    private final Gid[] gids;
    public final KeyTable keys = new KeyTable();
    public final Counters counters = new Counters();
    public final PacketPool packets = new PacketPool();
    /** QP1 of port 1 (the GSI): never in the QP table, which starts at {@link #FIRST_QPN}. */
    public final Gsi gsi = new Gsi(this);
    /** Makes atomics atomic against other atomics on this device. */
    public final Object atomicLock = new Object();
    /** The QP table: numbers to live QPs. */
    private final QpTable table = new QpTable();
    private volatile Link link;
    /** Port 1's carrier: while false, nothing is sent or received (see {@link #setPortUp}). */
    private volatile boolean portUp = true;
    private final NanoClock clock;
    private final ProgressAgent progress;
    /** The thread running {@link #progress}; null when the caller drives it (see {@link #progressAgent()}). */
    private final AgentRunner progressRunner;
    /** The destination QPN of a multicast packet. */
    public static final int MULTICAST_QPN = 0xFFFFFF;
    /** Multicast groups and the QPs attached to each. */
    private final McastGroups groups = new McastGroups(this);
    /**
     * QPs with packets queued in the current receive batch: used by one receiving thread at a time (a
     * link's receive agent, or a thread polling it: the link hands its receive token from one to the
     * other, which orders their accesses).
     */
    private final QpEngine[] batch = new QpEngine[64];
    private int batchSize;

    public Hca(String name, long guid, Gid[] gids) {
        this(name, guid, gids, NanoClock.SYSTEM, true);
    }

    /**
     * A device reading the time from {@code clock}. With {@code progressThread} false no thread runs
     * the progress agent: the caller does, through {@link #progressAgent()} (tests on a fake clock).
     */
    public Hca(String name, long guid, Gid[] gids, NanoClock clock, boolean progressThread) {
        this.name = name;
        this.guid = guid;
        this.gids = gids.clone();
        this.clock = clock;
        this.progress = new ProgressAgent(this, clock);
        if (progressThread) {
            progressRunner = AgentRunner.start(progress, progress.idleStrategy(),
                    t -> counters.inc(Counter.ENGINE_ERRORS)); // a failing QP stays as it is
            progress.setWaker(progressRunner::wake);
        } else {
            progressRunner = null;
        }
    }

    /** The device's time, in nanoseconds (timer deadlines are on this clock). */
    public long nanoTime() {
        return clock.nanoTime();
    }

    /** The progress agent, for a caller that drives it: {@code doWork()} returns how many tasks it ran. */
    public org.rdma4j.soft.agent.Agent progressAgent() {
        return progress;
    }

    /** QPs with a timer waiting in the progress agent (tests). */
    public int timersQueued() {
        return progress.timersQueued();
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

    /** Registers a QP and returns its number, or -1 if the table is full ({@link QpTable#add}). */
    public int addQp(QpEngine qp) {
        return table.add(qp);
    }

    /** The next QP created gets number {@code qpn} if it is free ({@link QpTable#nextQpnHint}). */
    public void nextQpnHint(int qpn) {
        table.nextQpnHint(qpn);
    }

    /** Removes QP {@code qpn} from the table and its timers from the progress agent. */
    public void removeQp(int qpn) {
        QpEngine qp = table.remove(qpn);
        if (qp != null) {
            progress.remove(qp);
        }
    }

    /** The live QP numbered {@code qpn}, or null. Any thread, without locks. */
    public QpEngine qp(int qpn) {
        return table.get(qpn);
    }

    /** How many QPs the device holds. */
    public int qpCount() {
        return table.count();
    }

    /** All live QPs, walking the table (control path: deregistration checks). */
    public Iterable<QpEngine> allQps() {
        return table;
    }

    /**
     * Receives on the calling thread what the link has queued ({@link Link#poll()}): an empty CQ poll
     * calls this, so a polling application needs no hand-off from the link's receive thread. Returns the
     * packets handled; never blocks.
     */
    public int pollLink() {
        Link l = link;
        return l == null ? 0 : l.poll();
    }

    /** The thread that polled the link is about to block on a completion channel (see {@link Link#pollerBlocks()}). */
    public void pollerBlocks() {
        Link l = link;
        if (l != null) {
            l.pollerBlocks();
        }
    }

    /** Receives on the calling thread, waiting up to {@code timeoutNs} (see {@link Link#await}); -1: cannot now. */
    public int awaitLink(long timeoutNs) {
        Link l = link;
        return l == null ? -1 : l.await(timeoutNs);
    }

    /** Ends another thread's {@link #awaitLink} soon. */
    public void wakeLinkAwait() {
        Link l = link;
        if (l != null) {
            l.wakeAwait();
        }
    }

    /** Whether the link has received packets it has not delivered yet (see {@link Link#receiveBacklogged()}). */
    public boolean receiveBacklogged() {
        Link l = link;
        return l != null && l.receiveBacklogged();
    }

    /**
     * Attaches {@code qp} to multicast {@code group} within the device's limits ({@link
     * McastGroups#attach}): ENOMEM past a limit, the link's failure to join as EINVAL.
     */
    public void attachMcast(Gid group, QpEngine qp, int maxGroups, int maxTotal, int maxPerGroup) {
        groups.attach(group, qp, maxGroups, maxTotal, maxPerGroup);
    }

    /** Detaches {@code qp} from {@code group}; false if it was not attached. Leaves the group when empty. */
    public boolean detachMcast(Gid group, QpEngine qp) {
        return groups.detach(group, qp);
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
        Link l = link;
        if (!admit(p, l)) {
            return;
        }
        try {
            l.send(p);
        } catch (IllegalStateException e) {
            counters.inc(Counter.FREED_MEMORY); // freed while the link copied it: lost, as above
        }
    }

    /**
     * Counts {@code p} as sent and says whether it goes to link {@code l}; if not (no link, the port
     * down, or the sender's memory freed after the gather, a race with Arena.close: the packet is lost
     * and a retransmission gathers again and fails locally), releases it.
     */
    private boolean admit(Packet p, Link l) {
        counters.add(Counter.SENT_PKTS, p.burstPackets);
        if (l == null || !portUp) {
            p.release();
            return false;
        }
        if (!p.payloadAlive()) {
            counters.inc(Counter.FREED_MEMORY);
            p.release();
            return false;
        }
        return true;
    }

    /**
     * Whether the link sends several packets in one call ({@link Link#sendsInBatches()}): a sender
     * that makes several packets at once then hands them over together ({@link #send(Packet[], int)}).
     */
    public boolean sendsInBatches() {
        Link l = link;
        return l != null && l.sendsInBatches();
    }

    /**
     * {@link #send(Packet)} for {@code count} packets at once, in order (the link may send them in one
     * call); takes ownership of every one and clears the array's slots.
     */
    public void send(Packet[] packets, int count) {
        Link l = link;
        int k = 0;
        for (int i = 0; i < count; i++) {
            Packet p = packets[i];
            packets[i] = null;
            if (admit(p, l)) {
                packets[k++] = p;
            }
        }
        if (k > 0) {
            int freed = l.send(packets, k);
            if (freed > 0) {
                counters.add(Counter.FREED_MEMORY, freed);
            }
        }
    }

    /** {@link Link#burstLimit} of this device's link to {@code dst}: 1 without a link. */
    public int burstLimit(Gid dst, int mtu) {
        Link l = link;
        return l == null ? 1 : l.burstLimit(dst, mtu);
    }

    /**
     * Where unicast packets to {@code dst} go, resolved once, when the link is a {@link DirectLink}
     * (the in-process fabric); null otherwise (then {@link #send} finds the way per packet).
     */
    public Route resolve(Gid dst) {
        return link instanceof DirectLink d ? d.resolve(dst) : null;
    }

    /**
     * {@link #send}, straight to a resolved route's device. The payload's memory is not checked here:
     * the receiving engine's copy meets memory freed meanwhile and drops the packet as lost (counted
     * as {@link Counter#FREED_MEMORY}), as {@link #send} does for the links that copy.
     */
    public void send(Packet p, Route r) {
        counters.add(Counter.SENT_PKTS, p.burstPackets);
        if (!portUp) {
            p.release();
            return;
        }
        r.sink.receive(p);
    }

    /** The receive path: validate the BTH basics and dispatch on the destination QPN. */
    @Override
    public void receive(Packet p) {
        if (!check(p)) {
            return;
        }
        int destQpn = Bth.destQpnOf(p.buffer);
        if (destQpn == MULTICAST_QPN) {
            multicast(p, false);
            return;
        }
        if (destQpn == Gsi.QPN) {
            gsi.receive(p);
            return;
        }
        QpEngine qp = lookup(p);
        if (qp != null) {
            qp.task.inbound(p);
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
        int destQpn = Bth.destQpnOf(p.buffer);
        if (destQpn == MULTICAST_QPN) {
            multicast(p, true);
            return;
        }
        if (destQpn == Gsi.QPN) {
            gsi.receive(p); // no QP task to batch for: straight into the GSI queue
            return;
        }
        QpEngine qp = lookup(p);
        if (qp != null) {
            queueInBatch(qp, p);
        }
    }

    private void queueInBatch(QpEngine qp, Packet p) {
        if (qp.task.enqueueInbound(p) && !qp.task.inBatch) {
            if (batchSize == batch.length) {
                endBatch();
            }
            qp.task.inBatch = true;
            batch[batchSize++] = qp;
        }
    }

    /**
     * A packet to QPN 0xFFFFFF: a copy to every QP attached to its destination group (the last one gets
     * the packet itself); the QPs check state and Q_Key as for any UD packet.
     */
    private void multicast(Packet p, boolean batched) {
        QpEngine[] members = p.dstGid == null ? null : groups.members(p.dstGid);
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
                members[i].task.inbound(c);
            }
        }
    }

    @Override
    public void endBatch() {
        int n = batchSize;
        batchSize = 0;
        RuntimeException failed = null;
        for (int i = 0; i < n; i++) {
            QpEngine qp = batch[i];
            batch[i] = null;
            qp.task.inBatch = false;
            try {
                qp.task.schedule();
            } catch (RuntimeException e) {
                // the other QPs of the batch still run (and leave the batch): a QP left marked would
                // never be batched again and its inbound packets would wait for another trigger
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Counts and checks a packet; false when it was dropped (and released). */
    private boolean check(Packet p) {
        if (!portUp) { // a port without carrier receives nothing
            p.release();
            return false;
        }
        counters.add(Counter.RCVD_PKTS, p.burstPackets);
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

    /** Has the progress agent run {@code qp}'s task (used when inline nesting gets too deep). */
    void defer(QpEngine qp) {
        progress.defer(qp);
    }

    /** {@code qp} set a timer deadline (on {@link #nanoTime()}): the progress agent runs its task then. */
    public void timerArmed(QpEngine qp, long deadlineNs) {
        progress.timerArmed(qp, deadlineNs);
    }

    /** Stops the progress agent and detaches from the link. */
    public void close() {
        if (progressRunner != null) {
            progressRunner.close();
        }
        Link l = link;
        if (l != null) {
            l.close();
        }
    }
}

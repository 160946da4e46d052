// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;

/**
 * How a suite's queue pairs get connected, through the public API only: the GID index each device
 * connects from, pairs of RC/UC/UD QPs (A on the device under test, B on the peer) made and brought up
 * to RTS through the setup's {@link QpConnector} or the guided path ({@link PairSpec#builder}), a pair
 * reconnected, a lone QP connected to itself. Everything it makes is tracked by the suite's
 * {@link AbstractVerbsTest}, which closes it after the test. One per suite instance, used by one test
 * at a time.
 */
final class PairConnections {
    private final AbstractVerbsTest t;
    private final Map<Context, Integer> gidIndexes = new HashMap<>();
    /** The connections of pairs a {@link QpConnector} made (closed with the suite's other resources). */
    private final Map<QpPair, QpConnector.Connection> connections = new IdentityHashMap<>();

    PairConnections(AbstractVerbsTest t) {
        this.t = t;
    }

    /** Forgets the connections of the test that ended (closed with its other resources by then). */
    void clear() {
        connections.clear();
    }

    /**
     * The local GID index connections use on {@code c}: the setup's choice, by default the first
     * non-empty RoCE v2 entry of port 1 (the transport speaks RoCEv2), else the first non-empty one.
     */
    int gidIndex(Context c) {
        int i = t.setup.gidIndex(c);
        return i >= 0 ? i : gidIndexes.computeIfAbsent(c, PairConnections::firstGidIndex);
    }

    private static int firstGidIndex(Context c) {
        int len = c.queryPort(1).gidTblLen();
        int any = -1;
        for (int i = 0; i < len; i++) {
            try {
                GidEntry e = c.queryGidEntry(1, i);
                if (!e.gid().isZero()) {
                    if (e.type() == GidEntry.GidType.ROCE_V2) {
                        return i;
                    }
                    if (any < 0) {
                        any = i;
                    }
                }
            } catch (VerbsException e) {
                if (e.errno() != Errno.ENODATA) {
                    throw e;
                }
            }
        }
        if (any >= 0) {
            return any;
        }
        throw new AssertionError(c.device().name() + " port 1 has no GID (table of " + len + ")");
    }

    /** Creates both sides of {@code s} and brings them up to RTS connected to each other. */
    QpPair connect(PairSpec s) {
        QpConnector connector = connectorFor(s.type);
        if (connector == null) {
            assumeModifyQpConnects();
        }
        Context ctx = t.ctx;
        Context pc = t.peer();
        DeviceAttr da = ctx.queryDevice();
        DeviceAttr pa = pc.queryDevice();
        if (s.maxRdAtomic < 0) {
            s.maxRdAtomic = Math.min(16, Math.min(da.maxQpInitRdAtom(), pa.maxQpInitRdAtom()));
        }
        if (s.maxDestRdAtomic < 0) {
            s.maxDestRdAtomic = Math.min(16, Math.min(da.maxQpRdAtom(), pa.maxQpRdAtom()));
        }
        ProtectionDomain pdA = s.pdA != null ? s.pdA : t.allocPd(ctx);
        ProtectionDomain pdB = s.pdB != null ? s.pdB : t.allocPd(pc);
        CompletionQueue scqA = s.sendCqA != null ? s.sendCqA : t.createCq(ctx, s.cqe);
        CompletionQueue rcqA = s.recvCqA != null ? s.recvCqA : t.createCq(ctx, s.cqe);
        CompletionQueue scqB = s.sendCqB != null ? s.sendCqB : t.createCq(pc, s.cqe);
        CompletionQueue rcqB = s.recvCqB != null ? s.recvCqB : t.createCq(pc, s.cqe);
        QueuePair qpA = t.createQp(pdA, new QpInitAttr(s.type, scqA, rcqA).cap(s.capA.copy()).srq(s.srqA)
                .sqSigAll(s.sqSigAllA));
        QueuePair qpB = t.createQp(pdB, new QpInitAttr(s.type, scqB, rcqB).cap(s.capB.copy()).srq(s.srqB));
        int giA = gidIndex(ctx);
        int giB = gidIndex(pc);
        Gid gidA = ctx.queryGid(1, giA);
        Gid gidB = pc.queryGid(1, giB);
        AddressHandle ahA = null;
        AddressHandle ahB = null;
        if (s.type == QpType.UD) {
            ahA = t.track(pdA.createAh(AhAttr.roce(gidB, giA)));
            ahB = t.track(pdB.createAh(AhAttr.roce(gidA, giB)));
        }
        Endpoint a = new Endpoint(ctx, pdA, scqA, rcqA, qpA, giA, gidA, ahA);
        Endpoint b = new Endpoint(pc, pdB, scqB, rcqB, qpB, giB, gidB, ahB);
        QpPair p = new QpPair(a, b, s);
        if (connector != null) {
            connections.put(p, t.track(connectThrough(connector, p)));
        } else {
            bringUp(p);
        }
        return p;
    }

    /** The setup's connector when it connects QPs of {@code type}, else null (modify_qp). */
    private QpConnector connectorFor(QpType type) {
        QpConnector c = t.setup.qpConnector();
        return c != null && c.connects(type) ? c : null;
    }

    private static QpConnector.Connection connectThrough(QpConnector c, QpPair p) {
        PairSpec s = p.spec();
        return c.connect(new QpConnector.Side(p.a().qp(), s.accessA, s.psnA, s.minRnrTimerA),
                new QpConnector.Side(p.b().qp(), s.accessB, s.psnB, s.minRnrTimerB),
                new QpConnector.Link(s.mtu, s.timeout, s.retryCnt, s.rnrRetry, s.maxRdAtomic, s.maxDestRdAtomic));
    }

    /** Aborts the test, with the setup's reason, when its QPs cannot be connected by modify_qp. */
    void assumeModifyQpConnects() {
        String why = t.setup.modifyQpConnectUnsupported();
        assumeTrue(why == null, () -> "setup " + t.setup.name() + " cannot connect QPs by modify_qp: " + why);
    }

    /** Moves both QPs of {@code p} to RESET and brings them up again, with fresh PSNs. */
    void reconnect(QpPair p) {
        QpConnector.Connection old = connections.remove(p);
        if (old != null) {
            old.close(); // disconnects; the QPs stay
        }
        QpBringUp.to(p.a().qp(), QpState.RESET);
        QpBringUp.to(p.b().qp(), QpState.RESET);
        p.spec().psns((p.spec().psnA + 0x10000) & 0xFFFFFF, (p.spec().psnB + 0x10000) & 0xFFFFFF);
        if (old != null) {
            connections.put(p, t.track(connectThrough(t.setup.qpConnector(), p)));
        } else {
            bringUp(p);
        }
    }

    /**
     * Brings a lone {@code qp} from RESET up to {@code upTo} (INIT, RTR or RTS) connected to itself
     * (its own GID and QPN), with the required masks only.
     */
    void bringUpSelfConnected(QueuePair qp, QpState upTo) {
        QpBringUp.toInit(qp, AbstractVerbsTest.QP_ALL, AbstractVerbsTest.DEFAULT_QKEY);
        if (upTo == QpState.INIT) {
            return;
        }
        assumeModifyQpConnects();
        int gi = gidIndex(qp.context());
        Mtu mtu = qp.context().queryPort(1).activeMtu().bytes() >= 1024 ? Mtu.MTU_1024
                : qp.context().queryPort(1).activeMtu();
        QpBringUp.toRtr(qp, mtu, qp.context().queryGid(1, gi), gi, qp.qpn(), 0, 1, 12);
        if (upTo == QpState.RTR) {
            return;
        }
        QpBringUp.toRts(qp, 0, 14, 7, 7, 1);
    }

    /** Through the public guided path ({@link PairSpec#builder}), as an application would. */
    private static void bringUp(QpPair p) {
        PairSpec s = p.spec();
        PreparedQueuePair a = s.builder(p.a(), true).prepare(p.a().qp());
        PreparedQueuePair b = s.builder(p.b(), false).prepare(p.b().qp());
        a.handshake(b.endpoint());
        b.handshake(a.endpoint());
    }
}

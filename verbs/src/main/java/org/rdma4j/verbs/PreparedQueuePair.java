// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import org.rdma4j.verbs.spi.QpTransitions;

/**
 * A queue pair created and in INIT by a {@link QueuePairBuilder}, waiting for its peer's
 * {@link QpEndpoint}: hand {@link #endpoint()} to the peer, then {@link #handshake(QpEndpoint)} with
 * the peer's. Receives may be posted already (a QP in INIT accepts them), so nothing the peer sends
 * right after its own handshake meets an empty receive queue. Closing this closes the QP.
 * Not thread safe.
 */
public final class PreparedQueuePair implements AutoCloseable {
    private final QueuePair qp;
    private final int port;
    private final int gidIndex;
    private final Gid gid;
    private final int lid;
    private final LinkLayer linkLayer;
    private final Mtu mtu;
    private final int psn;
    private final int qkey;
    private final int timeout;
    private final int retryCnt;
    private final int rnrRetry;
    private final int minRnrTimer;
    private final int maxRdAtomic;
    private final int maxDestRdAtomic;
    private final int hopLimit;
    private final int trafficClass;
    private final int serviceLevel;

    PreparedQueuePair(QueuePair qp, int port, int gidIndex, Gid gid, int lid, LinkLayer linkLayer, Mtu mtu, int psn,
                      int qkey, int timeout, int retryCnt, int rnrRetry, int minRnrTimer, int maxRdAtomic,
                      int maxDestRdAtomic, int hopLimit, int trafficClass, int serviceLevel) {
        this.qp = qp;
        this.port = port;
        this.gidIndex = gidIndex;
        this.gid = gid;
        this.lid = lid;
        this.linkLayer = linkLayer;
        this.mtu = mtu;
        this.psn = psn;
        this.qkey = qkey;
        this.timeout = timeout;
        this.retryCnt = retryCnt;
        this.rnrRetry = rnrRetry;
        this.minRnrTimer = minRnrTimer;
        this.maxRdAtomic = maxRdAtomic;
        this.maxDestRdAtomic = maxDestRdAtomic;
        this.hopLimit = hopLimit;
        this.trafficClass = trafficClass;
        this.serviceLevel = serviceLevel;
    }

    /** {@return the queue pair (in INIT until the handshake)} */
    public QueuePair qp() {
        return qp;
    }

    /** {@return the local GID index the QP sends from} */
    public int gidIndex() {
        return gidIndex;
    }

    /** {@return what the peer needs to connect to this QP (or, for UD, to send to it)} */
    public QpEndpoint endpoint() {
        return new QpEndpoint(qp.type(), lid, qp.qpn(), psn, gid, mtu, qkey);
    }

    /**
     * The address vector from this QP's port and GID to {@code remote}: what an RC/UC QP is connected
     * with, and what a UD sender makes its address handle from ({@code pd.createAh(prepared.routeTo(remote))}).
     * A remote without a GID (zero) is routed by LID alone, without a GRH: fine on InfiniBand inside
     * a subnet, refused (EINVAL) by a RoCE provider, as with libibverbs.
     *
     * @param remote the peer's endpoint
     * @return the address vector, through this QP's port
     */
    public AhAttr routeTo(QpEndpoint remote) {
        GlobalRoute grh = remote.gid().isZero() ? null
                : new GlobalRoute(remote.gid(), 0, gidIndex, hopLimit, trafficClass);
        return new AhAttr(grh, remote.lid(), serviceLevel, 0, 0, port);
    }

    /**
     * Connects to {@code remote} and moves the QP through RTR to RTS; returns it. The path MTU is the
     * smaller of both endpoints'. A UD QP needs no remote ({@link #handshake()}); given one, it only
     * checks its type. EINVAL, with the QP left in INIT, for an endpoint of another QP type or (on
     * RoCE) without a GID; a failed RTR -> RTS leaves it in RTR. Either way close it or bring it back
     * to RESET.
     *
     * @param remote the peer's endpoint ({@link #endpoint()} on its side)
     * @return the QP, in RTS
     * @throws VerbsException EINVAL as described; the errors of {@code ibv_modify_qp} (S-API-1)
     */
    public QueuePair handshake(QpEndpoint remote) {
        if (remote == null) {
            throw new VerbsException(Errno.EINVAL, "no remote endpoint for a " + qp.type() + " QP");
        }
        if (remote.type() != qp.type()) {
            throw new VerbsException(Errno.EINVAL, "a " + qp.type() + " QP cannot connect to a " + remote.type()
                    + " endpoint (" + remote + ")");
        }
        if (qp.type() == QpType.UD) {
            return handshake();
        }
        if (remote.gid().isZero() && linkLayer != LinkLayer.INFINIBAND) {
            throw new VerbsException(Errno.EINVAL, "the remote endpoint has no GID, which RoCE needs (" + remote + ")");
        }
        Mtu path = remote.mtu().bytes() < mtu.bytes() ? remote.mtu() : mtu;
        QpAttr rtr = new QpAttr().state(QpState.RTR).pathMtu(path).ahAttr(routeTo(remote)).destQpNum(remote.qpn())
                .rqPsn(remote.psn());
        QpAttr rts = new QpAttr().state(QpState.RTS).sqPsn(psn);
        if (qp.type() == QpType.RC) {
            rtr.maxDestRdAtomic(maxDestRdAtomic).minRnrTimer(minRnrTimer);
            rts.timeout(timeout).retryCnt(retryCnt).rnrRetry(rnrRetry).maxRdAtomic(maxRdAtomic);
        }
        step(qp, rtr, QpState.INIT, QpState.RTR);
        step(qp, rts, QpState.RTR, QpState.RTS);
        return qp;
    }

    /**
     * Moves a UD QP to RTS (it needs no remote).
     *
     * @return the QP, in RTS
     * @throws VerbsException EINVAL for a connected QP; the errors of {@code ibv_modify_qp}
     */
    public QueuePair handshake() {
        if (qp.type() != QpType.UD) {
            throw new VerbsException(Errno.EINVAL, "a " + qp.type() + " QP needs the remote endpoint to connect to");
        }
        step(qp, new QpAttr().state(QpState.RTR), QpState.INIT, QpState.RTR);
        step(qp, new QpAttr().state(QpState.RTS).sqPsn(psn), QpState.RTR, QpState.RTS);
        return qp;
    }

    /** Closes the QP (idempotent). */
    @Override
    public void close() {
        qp.close();
    }

    /**
     * One {@code from -> to} modify with the mask the state table gives: every required bit, plus the
     * optional bits {@code attr} was given. A required attribute the caller forgot is a bug here, not
     * an EINVAL to report.
     */
    static void step(QueuePair qp, QpAttr attr, QpState from, QpState to) {
        int required = QpAttrMask.STATE | QpTransitions.required(qp.type(), from, to);
        int allowed = required | QpTransitions.optional(qp.type(), from, to);
        if ((attr.mask() & required) != required) {
            throw new IllegalStateException(from + " -> " + to + " needs " + QpAttrMask.toString(required)
                    + " but only " + QpAttrMask.toString(attr.mask()) + " were set");
        }
        qp.modify(attr, attr.mask() & allowed);
    }

    @Override
    public String toString() {
        return "PreparedQueuePair[" + qp.type() + " qpn 0x" + Integer.toHexString(qp.qpn()) + ", " + qp.state()
                + ", gid index " + gidIndex + "]";
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;

/**
 * What a connection's values do to its QP: the attributes of each state (ib_cm_init_qp_attr) and the
 * moves the CM makes itself (to RTS on connect/accept, to ERROR on disconnect or rejection). Callers
 * hold the engine's lock.
 */
final class CmQpAttrs {
    /** The hop limit of the GRH (RoCEv2: the IP TTL) for connected QPs. */
    static final int HOP_LIMIT = 64;

    private CmQpAttrs() {
    }

    static void qpToError(CmId id) {
        QueuePair qp = id.qp;
        if (qp != null && !qp.isClosed() && id.ps != PortSpace.UDP) {
            try {
                qp.modify(new QpAttr().state(QpState.ERR));
            } catch (RuntimeException e) {
                // the program destroyed or broke it; nothing left to flush
            }
        }
    }

    /**
     * Moves the id's QP from INIT through RTR to RTS with the connection's values. The starting PSN a
     * side puts in its REQ or REP is the PSN its own QP expects to receive, and the peer sends from it:
     * Linux's ib_cm sets the active side's rq_psn and the passive side's sq_psn from the REQ's, and the
     * other two from the REP's (cm.c: ib_send_cm_req, cm_req_handler, cm_rep_handler).
     */
    static void moveToRts(CmId id, int ackTimeout) {
        QueuePair qp = id.qp;
        qp.modify(rtrAttr(id).accessFlags(remoteAccess(id)));
        qp.modify(rtsAttr(id, ackTimeout));
    }

    /** What the peer may do to the QP: WRITE always, READ and atomics when it may have requests outstanding. */
    static int remoteAccess(CmId id) {
        return Access.REMOTE_WRITE | (id.conn.responderResources > 0 ? Access.REMOTE_READ | Access.REMOTE_ATOMIC : 0);
    }

    /** INIT to RTR with the connection's values: the peer's address, QPN and send PSN (= our receive PSN). */
    static QpAttr rtrAttr(CmId id) {
        return new QpAttr().state(QpState.RTR).ahAttr(ahAttr(id)).pathMtu(Mtu.ofValue(id.conn.pathMtu)).destQpNum(id.conn.remoteQpn)
                .rqPsn(id.conn.localPsn).maxDestRdAtomic(id.conn.responderResources).minRnrTimer(id.minRnrTimer);
    }

    static QpAttr rtsAttr(CmId id, int ackTimeout) {
        return new QpAttr().state(QpState.RTS).sqPsn(id.conn.remotePsn).timeout(ackTimeout).retryCnt(id.conn.retryCount)
                .rnrRetry(id.conn.rnrRetryCount).maxRdAtomic(id.conn.initiatorDepth);
    }

    /** The address vector that reaches the id's peer (a UD id's, given with its events). */
    static AhAttr ahAttr(CmId id) {
        return new AhAttr(new GlobalRoute(id.dgid, 0, id.gidIndex, HOP_LIMIT, 0), 0, 0, 0, 0, id.portNum);
    }

    /** rdma_init_qp_attr for {@code id} (see {@link CmEngine#initQpAttr}); the id is on a device. */
    static QpAttr initQpAttr(CmId id, QpState state) {
        boolean known = switch (id.state) {
            case REQ_RCVD, REP_SENT, REP_RCVD, ESTABLISHED -> true;
            default -> false;
        };
        boolean ud = id.ps == PortSpace.UDP;
        return switch (state) {
            case INIT -> {
                QpAttr a = new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(id.portNum);
                yield ud ? a.qkey(CmId.UDP_QKEY) : a.accessFlags(known ? remoteAccess(id) : 0);
            }
            case RTR -> {
                if (ud) {
                    yield new QpAttr().state(QpState.RTR);
                }
                if (!known) {
                    throw CmWords.error(Errno.EINVAL, "init QP attributes (RTR) for", id, "not possible in state " + id.state);
                }
                yield rtrAttr(id);
            }
            case RTS -> {
                if (ud) {
                    yield new QpAttr().state(QpState.RTS).sqPsn(id.conn.localPsn);
                }
                if (!known) {
                    throw CmWords.error(Errno.EINVAL, "init QP attributes (RTS) for", id, "not possible in state " + id.state);
                }
                // the passive side uses the ACK timeout the REQ asked for, as accept does
                yield rtsAttr(id, id.listener != null && id.conn.remoteAckTimeout != 0 ? id.conn.remoteAckTimeout : id.ackTimeout);
            }
            default -> throw CmWords.error(Errno.EINVAL, "init QP attributes for", id, "rdma_init_qp_attr gives INIT, RTR or RTS, not "
                    + state);
        };
    }
}

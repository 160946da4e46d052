// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.rdma4j.verbs.QpAttrMask.*;

import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;

/**
 * The RESET -> INIT -> RTR -> RTS path through the public API with exactly the attribute masks the
 * IBTA state table requires (SEMANTICS.md, "QP create"). Written out here, independently of
 * {@code org.rdma4j.verbs.spi.QpTransitions}, so that the suite checks the table instead of
 * trusting it.
 */
public final class QpBringUp {
    public static final int RESET_TO_INIT_RC_UC = PKEY_INDEX | PORT | ACCESS_FLAGS;
    public static final int RESET_TO_INIT_UD = PKEY_INDEX | PORT | QKEY;
    public static final int INIT_TO_RTR_RC = AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
    public static final int INIT_TO_RTR_UC = AV | PATH_MTU | DEST_QPN | RQ_PSN;
    public static final int INIT_TO_RTR_UD = 0;
    public static final int RTR_TO_RTS_RC = SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC;
    public static final int RTR_TO_RTS_UC_UD = SQ_PSN;
    /** Every bit of {@code enum ibv_qp_attr_mask} the API defines. */
    public static final int ALL_MASK_BITS = (1 << 21) - 1;

    private QpBringUp() {}

    /** Mask bits RESET -> INIT requires (besides STATE). */
    public static int initRequired(QpType t) {
        return t == QpType.UD ? RESET_TO_INIT_UD : RESET_TO_INIT_RC_UC;
    }

    /** Mask bits INIT -> RTR requires (besides STATE). */
    public static int rtrRequired(QpType t) {
        return switch (t) {
            case RC -> INIT_TO_RTR_RC;
            case UC -> INIT_TO_RTR_UC;
            case UD -> INIT_TO_RTR_UD;
        };
    }

    /** Mask bits RTR -> RTS requires (besides STATE). */
    public static int rtsRequired(QpType t) {
        return t == QpType.RC ? RTR_TO_RTS_RC : RTR_TO_RTS_UC_UD;
    }

    /** Mask bits the step into {@code to} (INIT, RTR or RTS) requires, besides STATE. */
    public static int required(QpType t, QpState to) {
        return switch (to) {
            case INIT -> initRequired(t);
            case RTR -> rtrRequired(t);
            case RTS -> rtsRequired(t);
            default -> throw new IllegalArgumentException(to.toString());
        };
    }

    /** Every field RESET -> INIT may read, filled with valid values. */
    public static QpAttr initAttr(int accessFlags, int qkey) {
        return new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(accessFlags).qkey(qkey);
    }

    /** Every field INIT -> RTR may read, filled with valid values. */
    public static QpAttr rtrAttr(Mtu mtu, Gid dgid, int sgidIndex, int destQpn, int rqPsn, int maxDestRdAtomic,
                                 int minRnrTimer) {
        return new QpAttr().state(QpState.RTR).pathMtu(mtu).ahAttr(AhAttr.roce(dgid, sgidIndex))
                .destQpNum(destQpn).rqPsn(rqPsn).maxDestRdAtomic(maxDestRdAtomic).minRnrTimer(minRnrTimer)
                .pkeyIndex(0);
    }

    /** Every field RTR -> RTS may read, filled with valid values. */
    public static QpAttr rtsAttr(int sqPsn, int timeout, int retryCnt, int rnrRetry, int maxRdAtomic) {
        return new QpAttr().state(QpState.RTS).sqPsn(sqPsn).timeout(timeout).retryCnt(retryCnt)
                .rnrRetry(rnrRetry).maxRdAtomic(maxRdAtomic);
    }

    public static void toInit(QueuePair qp, int accessFlags, int qkey) {
        qp.modify(initAttr(accessFlags, qkey), STATE | initRequired(qp.type()));
    }

    public static void toRtr(QueuePair qp, Mtu mtu, Gid dgid, int sgidIndex, int destQpn, int rqPsn,
                             int maxDestRdAtomic, int minRnrTimer) {
        qp.modify(rtrAttr(mtu, dgid, sgidIndex, destQpn, rqPsn, maxDestRdAtomic, minRnrTimer),
                STATE | rtrRequired(qp.type()));
    }

    public static void toRts(QueuePair qp, int sqPsn, int timeout, int retryCnt, int rnrRetry, int maxRdAtomic) {
        qp.modify(rtsAttr(sqPsn, timeout, retryCnt, rnrRetry, maxRdAtomic), STATE | rtsRequired(qp.type()));
    }

    /** Any state -> {@code s} where the table needs nothing but STATE (RESET, ERR, RTS -> SQD). */
    public static void to(QueuePair qp, QpState s) {
        qp.modify(new QpAttr().state(s), STATE);
    }
}

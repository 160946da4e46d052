// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.rdma4j.verbs.QpAttrMask.STATE;

import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;

/**
 * Lone QPs walked through the IBTA state table, each connected to itself (its own GID and QPN), which
 * is enough to reach every state: a fresh QP on the test's device, valid attributes for each step,
 * and a QP driven from RESET to any state along valid transitions, its state checked at each step.
 * For the suites of the state table and of QP attributes; everything is made through (and closed by)
 * the suite's {@link AbstractVerbsTest}.
 */
final class SelfConnectedQps {
    /** RESET -> INIT -> RTR -> RTS, the steps that need attributes. */
    static final QpState[] STEPS = {QpState.INIT, QpState.RTR, QpState.RTS};

    private final AbstractVerbsTest t;
    private ProtectionDomain pd;

    SelfConnectedQps(AbstractVerbsTest t) {
        this.t = t;
    }

    /** A new QP of {@code type} in RESET, with its own CQ, on one PD of the test's device. */
    QueuePair newQp(QpType type) {
        if (pd == null) {
            pd = t.allocPd(t.ctx);
        }
        return t.createQp(pd, type);
    }

    /** The path MTU the QPs use: 1024, or the port's active MTU if that is smaller. */
    Mtu mtu() {
        return t.portAttr().activeMtu().bytes() >= 1024 ? Mtu.MTU_1024 : t.portAttr().activeMtu();
    }

    /** Every field the step into {@code to} may read, valid, for a QP connected to itself. */
    QpAttr stepAttr(QueuePair qp, QpState to) {
        return switch (to) {
            case INIT -> QpBringUp.initAttr(AbstractVerbsTest.QP_ALL, AbstractVerbsTest.DEFAULT_QKEY);
            case RTR -> {
                int gi = t.gidIndex(t.ctx);
                yield QpBringUp.rtrAttr(mtu(), t.ctx.queryGid(1, gi), gi, qp.qpn(), 0x10, 1, 12)
                        .accessFlags(AbstractVerbsTest.QP_ALL).qkey(AbstractVerbsTest.DEFAULT_QKEY);
            }
            case RTS -> QpBringUp.rtsAttr(0x10, 14, 7, 7, 1).accessFlags(AbstractVerbsTest.QP_ALL).minRnrTimer(12)
                    .qkey(AbstractVerbsTest.DEFAULT_QKEY);
            default -> new QpAttr().state(to);
        };
    }

    /** Drives a fresh QP from RESET to {@code s} along valid transitions. */
    void driveTo(QueuePair qp, QpState s) {
        if (s == QpState.RESET) {
            return;
        }
        if (s == QpState.ERR) {
            driveTo(qp, QpState.RTS);
            QpBringUp.to(qp, QpState.ERR);
            BoundedWaits.assertQpState(qp, QpState.ERR);
            return;
        }
        if (s == QpState.SQD) {
            driveTo(qp, QpState.RTS);
            QpBringUp.to(qp, QpState.SQD);
            BoundedWaits.awaitQpState(qp, QpState.SQD);
            return;
        }
        for (QpState step : STEPS) {
            qp.modify(stepAttr(qp, step), STATE | QpBringUp.required(qp.type(), step));
            BoundedWaits.assertQpState(qp, step);
            if (step == s) {
                return;
            }
        }
        throw new IllegalArgumentException("cannot drive to " + s);
    }
}

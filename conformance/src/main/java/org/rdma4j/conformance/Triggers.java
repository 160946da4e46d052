// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.WcStatus;

/** Ways to make a device raise an event without a peer, for the event and poller suites. */
final class Triggers {
    private Triggers() {}

    /**
     * Arms {@code cq} and makes exactly one completion on it (a receive flushed by moving a throw-away
     * QP to ERR), so its channel gets one completion event. The QP is destroyed again; the flushed
     * completion is polled.
     */
    static void completionEvent(AbstractVerbsTest t, CompletionQueue cq) {
        ProtectionDomain pd = t.allocPd(cq.context());
        MemoryRegion mr = t.register(pd, 64, AbstractVerbsTest.MR_ALL);
        try (QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq))) {
            QpBringUp.toInit(qp, AbstractVerbsTest.QP_ALL, AbstractVerbsTest.DEFAULT_QKEY);
            qp.postRecv(new RecvWorkRequest().wrId(0xF1).sge(mr, 0, 64));
            cq.reqNotify(false);
            QpBringUp.to(qp, QpState.ERR);
            AbstractVerbsTest.expect(cq, 0xF1, WcStatus.WR_FLUSH_ERR);
        }
    }
}

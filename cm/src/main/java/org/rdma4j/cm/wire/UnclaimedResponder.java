// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.spi.GsiPort;
import org.rdma4j.verbs.spi.GsiResponder;

/**
 * The IB CM's answers for a port where no CM id exists (so no CM agent has its QP1 open): what the
 * kernel's ib_cm, which always listens, answers when nothing matches. A REQ gets a REJ with reason 8
 * (invalid service id), a SIDR_REQ a SIDR_REP with status 1 (service id not supported), a DREQ a DREP
 * (the connection is gone; the peer may stop asking). Everything else (answers to requests we cannot
 * have made, malformed MADs) gets nothing. Stateless and thread safe: it runs on the provider's
 * delivering thread through {@link GsiResponder}, allocating two flyweights per answer and nothing else.
 */
public final class UnclaimedResponder implements GsiResponder {
    /** For the service loader. */
    public UnclaimedResponder() {
    }

    @Override
    public boolean answer(MemorySegment mad, GsiPort.Source from, MemorySegment reply) {
        int attr = MadCheck.check(mad, mad.byteSize());
        long tid = attr > 0 ? MadHeader.transactionId(mad) : 0;
        switch (attr) {
            case MadHeader.ATTR_REQ -> {
                int theirs = new CmReq().wrap(mad).localCommId();
                CmRej r = new CmRej().wrap(reply);
                r.clearAndInit(tid);
                r.localCommId(0).remoteCommId(theirs).messageRejected(CmRej.MSG_REQ)
                        .reason(CmRej.REASON_INVALID_SERVICE_ID);
                return true;
            }
            case MadHeader.ATTR_SIDR_REQ -> {
                SidrReq q = new SidrReq().wrap(mad);
                SidrRep r = new SidrRep().wrap(reply);
                r.clearAndInit(tid);
                r.requestId(q.requestId()).serviceId(q.serviceId()).status(SidrRep.STATUS_UNSUPPORTED);
                return true;
            }
            case MadHeader.ATTR_DREQ -> {
                CmDreq q = new CmDreq().wrap(mad);
                CmDrep r = new CmDrep().wrap(reply);
                r.clearAndInit(tid);
                r.localCommId(q.remoteCommId()).remoteCommId(q.localCommId());
                return true;
            }
            default -> {
                return false;
            }
        }
    }
}

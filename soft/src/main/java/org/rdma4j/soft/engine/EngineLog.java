// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.WcStatus;

/**
 * What the engine tells an operator, on the {@code System.Logger} category {@value #CATEGORY}: a QP
 * that gave up on its peer (transport or RNR retries exhausted: WARNING, once per QP, naming the device,
 * the QPN, the peer's address and QPN, the PSN and the retry budget). Called on error paths only, never
 * per packet; nothing is built unless the level is on. Thread safe.
 */
final class EngineLog {
    /** The logger category of the soft device and its engine. */
    static final String CATEGORY = "org.rdma4j.soft";
    private static final Logger LOG = System.getLogger(CATEGORY);

    private EngineLog() {
    }

    /** The requester of {@code qp} ends its oldest work request with {@code status} at {@code psn}. */
    static void requesterFailed(QpEngine qp, int psn, WcStatus status) {
        boolean retries = status == WcStatus.RETRY_EXC_ERR || status == WcStatus.RNR_RETRY_EXC_ERR;
        Level level = retries ? Level.WARNING : Level.DEBUG;
        if (!LOG.isLoggable(level)) {
            return;
        }
        String why = switch (status) {
            case RETRY_EXC_ERR -> "transport retries exhausted (retry_cnt " + qp.retryCnt + ")";
            case RNR_RETRY_EXC_ERR -> "RNR retries exhausted (rnr_retry " + qp.rnrRetry + ")";
            default -> "the peer answered with an error";
        };
        LOG.log(level, qp.hca.name + ": QP " + hex(qp.qpn) + " to peer " + peer(qp.dgid) + " QP " + hex(qp.destQpn)
                + ": " + why + " at PSN " + EngineEvents.psnHex(psn) + ", " + status + "; the QP is in the error state");
    }

    /** A GID as its IP address when it is one (IPv4-mapped shows as IPv4). */
    static String peer(Gid gid) {
        if (gid == null) {
            return "(none)";
        }
        try {
            return gid.toInetAddress().getHostAddress();
        } catch (RuntimeException e) {
            return gid.toString();
        }
    }

    static String hex(int qpn) {
        return "0x" + Integer.toHexString(qpn & 0xFFFFFF);
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsResource;

/**
 * Another way than modify_qp with exchanged QPNs to connect a pair of queue pairs: the connection
 * manager (rdma_cm's flow for QPs a program creates itself, as {@code rping -q} does). A setup offers
 * one through {@link ConformanceSetup#qpConnector()}; {@link AbstractVerbsTest#connect} then builds
 * the pair as usual (PDs, CQs, QPs in RESET) and hands it here instead of moving the QPs itself. An
 * iWARP device needs this: its RC QPs reach RTS only through the CM.
 *
 * <p>A connector must leave the pair with the attributes the modify_qp path would give it wherever
 * the transport lets a program choose them (access flags, path MTU, PSNs, timeout, retry counts, RNR
 * timer, read/atomic depths): the suites' expectations rest on them.
 */
public interface QpConnector {
    /** Whether this connector connects QPs of {@code type}; the others are connected by modify_qp. */
    boolean connects(QpType type);

    /**
     * Connects {@code a} (side A, the active side: it connects) to {@code b} (side B, the passive side:
     * it listens and accepts); both are in RESET. Returns once both are ready to send (RTS). The
     * returned connection is closed before the QPs (the suite tracks it after them).
     */
    Connection connect(Side a, Side b, Link link);

    /** One side: its QP and the values the modify_qp path would give it. */
    record Side(QueuePair qp, int accessFlags, int sendPsn, int minRnrTimer) {}

    /** What both sides share: path MTU, ACK timeout, retry counts and read/atomic depths. */
    record Link(Mtu mtu, int timeout, int retryCnt, int rnrRetry, int maxRdAtomic, int maxDestRdAtomic) {}

    /** The connection's state outside the QPs (CM ids, event channels); closing it disconnects. */
    interface Connection extends VerbsResource {}
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * A posted send work request: the request copied at post time plus its progress (rxe's wqe state):
 * started and sent by the requester, done (acknowledged, answered or failed) by the completer or, for
 * local operations and local errors, the requester. Owned by the QP's {@link SendQueue}; touched only
 * by the poster (before publication) and the QP task.
 */
final class SendWqe {
    long wrId;
    WrOpcode opcode;
    int flags;
    boolean signaled;
    int numSge;
    final long[] addr;
    final int[] length;
    final int[] lkey;
    /** Inline payload (copied at post), when {@link #isInline}. */
    final MemorySegment inlineData;
    boolean isInline;
    long totalLength;
    int imm;
    int invRkey;
    long remoteAddr;
    int rkey;
    long compareAdd;
    long swap;
    Gid dgid;
    Gid sgid;
    int remoteQpn;
    int remoteQkey;
    /** UD: the address handle's hop limit, traffic class and flow label. */
    int hopLimit;
    int trafficClass;
    int flowLabel;
    /** UD: the address handle belongs to the QP's protection domain. */
    boolean ahInQpPd;
    MemKey mw;
    int bindRkey;
    MemKey bindMr;
    long bindAddr;
    long bindLength;
    int bindAccess;

    // requester progress
    boolean started;
    /** Every packet (or the READ/atomic request) has been sent. */
    boolean sent;
    /** Finished: acknowledged, responses arrived, or failed (see {@link #status}). */
    boolean done;
    WcStatus status;
    int firstPsn;
    int lastPsn;
    int nextPsn;
    long sendOffset;
    /** READ: the next response PSN expected. */
    int respPsn;

    SendWqe(int maxSge, MemorySegment inlineData) {
        addr = new long[maxSge];
        length = new int[maxSge];
        lkey = new int[maxSge];
        this.inlineData = inlineData;
    }

    /** Whether {@code psn} is one of this request's PSNs. */
    boolean containsPsn(int psn) {
        return Psn.compare(psn, firstPsn) >= 0 && Psn.compare(psn, lastPsn) <= 0;
    }

    /** Finishes the request with {@code s}: nothing more of it is sent, it waits to be retired. */
    void finish(WcStatus s) {
        status = s;
        started = true;
        sent = true;
        done = true;
    }

    boolean isReadOrAtomic() {
        return opcode == WrOpcode.RDMA_READ || opcode.isAtomic();
    }

    void resetProgress() {
        started = false;
        sent = false;
        done = false;
        status = WcStatus.SUCCESS;
        sendOffset = 0;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Why an MPA connection setup did not end established, told as a C program using rdma_cm over siw would
 * learn it: the rdma_cm event ({@link #event()}), the event's status ({@link #status()}, a negative errno,
 * what an asynchronous program such as rping prints), and the errno a synchronous {@code rdma_connect}
 * sets ({@link #errno()}: librdmacm's {@code ucma_complete} gives ECONNREFUSED for any REJECTED event and
 * the status otherwise). The words name the step, the peer and, for a timeout, the time waited. A peer's
 * private data is kept as bytes ({@link #peerPrivateData()}) and never put into words.
 *
 * <p>siw's statuses ({@code siw_proc_mpareply}, {@code siw_cm_work_handler}; rdma_cm's
 * {@code cma_iw_handler} picks the event): the peer's reject, a reply that is not enhanced after an
 * enhanced request, and a peer that closes first give -ECONNRESET (REJECTED); a reply that asks for
 * markers, or lacks CRC after we asked for it, -ECONNREFUSED (REJECTED); the reply's timeout -ETIMEDOUT
 * (UNREACHABLE); a malformed reply (key, revision, length), IRD/ORD or RTR that cannot be met -EINVAL
 * (CONNECT_ERROR). On the responder side siw drops the connection without telling any program
 * ({@link CmEvent#NONE}); the status then says why for the log. Immutable.
 */
public final class MpaFailure {
    /** The rdma_cm event a C program would get. */
    public enum CmEvent {
        /** RDMA_CM_EVENT_REJECTED. */
        REJECTED,
        /** RDMA_CM_EVENT_UNREACHABLE. */
        UNREACHABLE,
        /** RDMA_CM_EVENT_CONNECT_ERROR. */
        CONNECT_ERROR,
        /** No event: the responder drops a connection no program has seen yet. */
        NONE
    }

    private static final byte[] NO_DATA = new byte[0];

    private final CmEvent event;
    private final int status;
    private final String words;
    private final byte[] peerPrivateData;
    private final boolean peerReject;

    private MpaFailure(CmEvent event, int errno, String words, byte[] peerPrivateData, boolean peerReject) {
        this.event = event;
        this.status = -errno;
        this.words = words;
        this.peerPrivateData = peerPrivateData == null ? NO_DATA : peerPrivateData;
        this.peerReject = peerReject;
    }

    static MpaFailure of(CmEvent event, int errno, String words) {
        return new MpaFailure(event, errno, words, null, false);
    }

    static MpaFailure peerReject(String words, byte[] privateData) {
        return new MpaFailure(CmEvent.REJECTED, Errno.ECONNRESET, words, privateData, true);
    }

    /** {@return the rdma_cm event} */
    public CmEvent event() {
        return event;
    }

    /** {@return the event's status: a negative errno} */
    public int status() {
        return status;
    }

    /** {@return the errno a synchronous rdma_cm call would set: ECONNREFUSED if rejected, else -status} */
    public int errno() {
        return event == CmEvent.REJECTED ? Errno.ECONNREFUSED : -status;
    }

    /** {@return whether the peer sent an MPA reject frame} */
    public boolean rejectedByPeer() {
        return peerReject;
    }

    /** {@return a copy of the private data of the peer's reject, empty if none} */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** {@return what happened, with the step and the peer} */
    public String words() {
        return words;
    }

    /** {@return the words with the event, status and errno by name} */
    public String message() {
        String e = event == CmEvent.NONE ? "no rdma_cm event" : "rdma_cm " + event;
        return words + " (" + e + ", status -" + Errno.name(-status) + ", errno " + Errno.name(errno()) + ")";
    }

    /** {@return the failure as the exception the verbs API throws} */
    public VerbsException toException() {
        return new VerbsException(errno(), message());
    }

    @Override
    public String toString() {
        return message();
    }
}

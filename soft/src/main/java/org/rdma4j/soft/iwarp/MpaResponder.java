// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.iwarp.MpaFailure.CmEvent.CONNECT_ERROR;
import static org.rdma4j.soft.iwarp.MpaFailure.CmEvent.NONE;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The passive side of an MPA connection setup, as siw's {@code siw_proc_mpareq}, {@code siw_accept} and
 * {@code siw_reject} do it: wait for the request (5 s by default), hand it to the program
 * ({@link #request()}), then send the reply the program chose with {@link #accept} or {@link #reject}; in
 * peer-to-peer mode wait for the RTR (and answer a Read RTR) before reporting the connection established.
 *
 * <p>A malformed request (key, revision, private data over 256 bytes) or a peer that closes or stalls
 * ends the setup with no reply and no event, as siw drops such a connection before any program sees it
 * (statuses -EPROTO, -ECONNRESET, -ETIMEDOUT, for the log). A request that asks for markers, or says it
 * is enhanced without room for IRD/ORD, is answered with a reject frame, as siw does (status
 * -EOPNOTSUPP); siw's reject to the latter keeps E with no IRD/ORD words, which this engine clears.
 *
 * <p>The reply echoes the request's revision and its E and siw-GSO flags; it has C when the request had
 * C or our configuration wants CRC (CRC is then on). With enhanced setup, IRD/ORD follow siw's relaxed
 * negotiation: our ORD is cut to the peer's IRD, our IRD raised to the peer's ORD; a peer-to-peer
 * request gets P back and the RTR chosen as siw chooses it (Write if offered, else Read if offered, else
 * Write). siw sets no timer on the RTR; this engine waits {@link MpaConfig#requestTimeoutNs()} for it.
 * Not thread safe.
 */
public final class MpaResponder extends MpaEngine {
    private enum State { AWAITING_REQUEST, DECIDING, SENDING_REPLY, AWAITING_RTR, SENDING_READ_RESPONSE, REJECTING, DONE }

    private State state = State.AWAITING_REQUEST;
    private int requestFlags;
    private int revision;
    private boolean enhanced;
    private boolean crc;
    private boolean peerToPeer;
    private MpaRtr rtr = MpaRtr.NONE;
    private int localIrd;
    private int localOrd;
    private MpaRequest request;
    private MpaConnection pending;
    private boolean rejected;

    /**
     * Prepares to read the request of a newly accepted TCP connection.
     *
     * @param config the local choices
     * @param peer   the peer's address, for messages
     */
    public MpaResponder(MpaConfig config, String peer) {
        super(config, peer);
    }

    /** {@return the request, once received; null before} */
    public MpaRequest request() {
        return request;
    }

    /** {@return whether the request is there and awaits {@link #accept} or {@link #reject}} */
    public boolean awaitingDecision() {
        return state == State.DECIDING && !failed();
    }

    /** {@return whether the program rejected the request and the reject frame was written} */
    public boolean rejected() {
        return rejected && state == State.DONE;
    }

    /**
     * Accepts the request, as {@code rdma_accept} does: queues the reply.
     *
     * @param ird         RDMA Reads this side will serve at once (rdma_cm's responder resources)
     * @param ord         RDMA Reads this side will issue at once (rdma_cm's initiator depth)
     * @param privateData private data for the peer, at most 252 bytes when enhanced (256 otherwise)
     * @throws IllegalStateException if no request awaits a decision
     * @throws VerbsException EINVAL if the private data is too long or IRD/ORD exceed the device's
     *                        maximum (siw's {@code siw_accept})
     */
    public void accept(int ird, int ord, byte[] privateData) {
        checkDeciding("accept");
        int max = MpaFrame.maxUlpPrivateData(enhanced);
        if (privateData.length > max) {
            throw new VerbsException(Errno.EINVAL, "MPA accept of " + peer + ": " + privateData.length
                    + " bytes of private data, at most " + max);
        }
        if (ird < 0 || ord < 0 || ird > config.maxIrd() || ord > config.maxOrd()) {
            throw new VerbsException(Errno.EINVAL, "MPA accept of " + peer + ": IRD " + ird + " and ORD " + ord
                    + " must be within the device's " + config.maxIrd() + " and " + config.maxOrd());
        }
        if (enhanced) {
            ord = Math.min(ord, localOrd);
            ird = Math.max(ird, localIrd);
        }
        queueFrame(true, replyFlags(), revision, ird | (peerToPeer ? MpaFrame.IRD_PEER_TO_PEER : 0),
                ord | rtr.ordBit(), privateData);
        pending = new MpaConnection(false, revision, enhanced, crc, ird, ord, rtr, request.privateData(),
                carryOver(), peer);
        state = State.SENDING_REPLY;
    }

    /**
     * Rejects the request, as {@code rdma_reject} does: queues a reject frame with the private data; the
     * connection is to be closed once {@link #idle()}.
     *
     * @param privateData private data for the peer, at most 252 bytes when enhanced (256 otherwise)
     * @throws IllegalStateException if no request awaits a decision
     * @throws VerbsException EINVAL if the private data is too long
     */
    public void reject(byte[] privateData) {
        checkDeciding("reject");
        int max = MpaFrame.maxUlpPrivateData(enhanced);
        if (privateData.length > max) {
            throw new VerbsException(Errno.EINVAL, "MPA reject of " + peer + ": " + privateData.length
                    + " bytes of private data, at most " + max);
        }
        queueFrame(true, replyFlags() | MpaFrame.FLAG_REJECT, revision,
                localIrd | (peerToPeer ? MpaFrame.IRD_PEER_TO_PEER : 0), localOrd | rtr.ordBit(), privateData);
        rejected = true;
        state = State.REJECTING;
    }

    private void checkDeciding(String what) {
        if (!awaitingDecision()) {
            throw new IllegalStateException("MPA " + what + " of " + peer + ": no request awaits a decision ("
                    + state + ")");
        }
    }

    private int replyFlags() {
        return requestFlags & (MpaFrame.FLAG_ENHANCED | MpaFrame.FLAG_SIW_GSO) | (crc ? MpaFrame.FLAG_CRC : 0);
    }

    @Override
    void start(long nowNs) {
        deadline(nowNs, config.requestTimeoutNs());
    }

    @Override
    void progress(long nowNs) {
        switch (state) {
            case AWAITING_REQUEST -> readRequest();
            case SENDING_REPLY -> {
                if (outboxEmpty()) {
                    if (rtr == MpaRtr.NONE) {
                        finish();
                    } else {
                        state = State.AWAITING_RTR;
                        deadline(nowNs, config.requestTimeoutNs());
                        readRtr();
                    }
                }
            }
            case AWAITING_RTR -> readRtr();
            case SENDING_READ_RESPONSE, REJECTING -> {
                if (outboxEmpty()) {
                    finish();
                }
            }
            default -> {
            }
        }
    }

    private void finish() {
        state = State.DONE;
        if (!rejected && !failed()) {
            established(new MpaConnection(false, pending.revision(), enhanced, crc, pending.ird(), pending.ord(),
                    rtr, pending.peerPrivateData(), carryOver(), peer));
        }
    }

    private void readRequest() {
        MpaStatus status = decode(false);
        MpaFrame f = frame;
        switch (status) {
            case NEED_MORE -> {
            }
            case COMPLETE -> {
                requestFlags = f.flags();
                revision = f.revision();
                enhanced = f.enhanced();
                crc = f.crc() || config.crc();
                if (enhanced) {
                    localOrd = Math.min(f.ird(), config.maxOrd());
                    localIrd = Math.min(f.ord(), config.maxIrd());
                    peerToPeer = (f.irdWord() & MpaFrame.IRD_PEER_TO_PEER) != 0;
                    if (peerToPeer) {
                        MpaRtr named = MpaRtr.named(f.ordWord());
                        rtr = named == MpaRtr.NONE ? MpaRtr.WRITE : named;
                    }
                }
                byte[] data = copy(enhanced ? f.ulpPrivateDataOffset() : MpaFrame.HEADER_LENGTH,
                        enhanced ? f.ulpPrivateDataLength() : f.privateDataLength());
                request = new MpaRequest(revision, enhanced, f.crc(), peerToPeer, localOrd, localIrd, data, peer);
                consume(f.frameLength());
                state = State.DECIDING;
                noDeadline();
            }
            case MARKERS_REQUESTED, ENHANCED_WITHOUT_IRD_ORD -> refuse(status);
            case TRUNCATED -> fail(MpaFailure.of(NONE, Errno.ECONNRESET, step() + ": " + peer
                    + " closed the connection after " + held() + " bytes of the request"));
            case WRONG_KEY -> fail(MpaFailure.of(NONE, Errno.EPROTO, step() + ": the request's key from " + peer
                    + " is not \"MPA ID Req Frame\"; closed without a reply"));
            case BAD_REVISION -> fail(MpaFailure.of(NONE, Errno.EPROTO, step() + ": the request's revision "
                    + f.revision() + " from " + peer + " is not 1 or 2; closed without a reply"));
            case PRIVATE_DATA_TOO_LONG -> fail(MpaFailure.of(NONE, Errno.EPROTO, step() + ": the request from "
                    + peer + " is too long: " + f.privateDataLength() + " bytes of private data, at most "
                    + MpaFrame.MAX_PRIVATE_DATA + "; closed without a reply"));
        }
    }

    /** Answers a request siw refuses with a reject frame carrying no private data. */
    private void refuse(MpaStatus status) {
        MpaFrame f = frame;
        int flags = f.flags() & (MpaFrame.FLAG_CRC | MpaFrame.FLAG_SIW_GSO) | MpaFrame.FLAG_REJECT;
        if (status == MpaStatus.MARKERS_REQUESTED && f.enhanced()) {
            flags |= MpaFrame.FLAG_ENHANCED;
        }
        queueFrame(true, flags, f.revision(), 0, 0, new byte[0]);
        String why = status == MpaStatus.MARKERS_REQUESTED ? "asks for MPA markers, which are not supported"
                : "is enhanced without its IRD/ORD words";
        fail(MpaFailure.of(NONE, Errno.EOPNOTSUPP, step() + ": the request from " + peer + " " + why
                + "; a reject was sent"));
        state = State.REJECTING;
    }

    private void readRtr() {
        int length = rtr.fpduLength();
        if (held() < length) {
            if (peerHasClosed()) {
                fail(MpaFailure.of(CONNECT_ERROR, Errno.ECONNRESET, step() + ": " + peer
                        + " closed the connection after " + held() + " of the RTR's " + length + " bytes"));
            }
            return;
        }
        MemorySegment s = held(0, length);
        if (!rtr.matches(s, 0, crc)) {
            fail(MpaFailure.of(CONNECT_ERROR, Errno.EPROTO, step() + ": the first FPDU from " + peer
                    + " is not the zero-length " + (rtr == MpaRtr.WRITE ? "RDMA Write" : "RDMA Read Request")
                    + " negotiated as the ready-to-receive message"
                    + (crc ? " (or its CRC is wrong)" : "")));
            return;
        }
        noDeadline();
        if (rtr == MpaRtr.READ) {
            int sinkStag = Rdmap.readSinkStag(s, 0);
            long sinkOffset = Rdmap.readSinkOffset(s, 0);
            FpduEncoder encoder = new FpduEncoder(crc);
            queueFpdu(out -> MpaRtr.encodeReadResponse(encoder, out, 0, sinkStag, sinkOffset));
            consume(length);
            state = State.SENDING_READ_RESPONSE;
            if (outboxEmpty()) {
                finish();
            }
        } else {
            consume(length);
            finish();
        }
    }

    @Override
    MpaFailure timeout() {
        long ms = TimeUnit.NANOSECONDS.toMillis(config.requestTimeoutNs());
        if (state == State.AWAITING_RTR) {
            return MpaFailure.of(CONNECT_ERROR, Errno.ETIMEDOUT, step() + ": no ready-to-receive message from "
                    + peer + " within " + ms + " ms (" + held() + " bytes arrived)");
        }
        return MpaFailure.of(NONE, Errno.ETIMEDOUT, step() + ": no complete request from " + peer + " within "
                + ms + " ms (" + held() + " bytes arrived); closed without a reply");
    }

    @Override
    MpaFailure.CmEvent closedEvent() {
        return state == State.AWAITING_REQUEST ? NONE : CONNECT_ERROR;
    }

    @Override
    String step() {
        return switch (state) {
            case AWAITING_REQUEST -> "MPA connection accepted, awaiting the request";
            case DECIDING -> "MPA request received, awaiting accept or reject";
            case SENDING_REPLY, AWAITING_RTR, SENDING_READ_RESPONSE -> "MPA reply sent, awaiting the ready-to-receive message";
            case REJECTING, DONE -> "MPA reject sent";
        };
    }

    @Override
    public boolean wantsRead() {
        return (state == State.AWAITING_REQUEST || state == State.AWAITING_RTR) && !failed() && !peerHasClosed()
                && inbox().hasRemaining();
    }

    @Override
    public boolean idle() {
        return state == State.DECIDING || state == State.DONE || failed() && outboxEmpty();
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.iwarp.MpaFailure.CmEvent.CONNECT_ERROR;
import static org.rdma4j.soft.iwarp.MpaFailure.CmEvent.REJECTED;
import static org.rdma4j.soft.iwarp.MpaFailure.CmEvent.UNREACHABLE;

import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The active side of an MPA connection setup, as siw's {@code siw_connect} and {@code siw_proc_mpareply}
 * do it: send the request, wait for the reply (10 s by default), decide, and in peer-to-peer mode send
 * the RTR before reporting the connection established.
 *
 * <p>The request: revision 2 with E set and the IRD/ORD words first in the private data (or revision 1
 * without them), C if CRC is wanted, never M; in peer-to-peer mode P in the IRD word and the offered
 * RTRs in the ORD word, and an ORD of at least 1.
 *
 * <p>The reply decides, in siw's order: a wrong key, a bad revision or an overlong frame is a malformed
 * reply (CONNECT_ERROR, -EINVAL); R is the peer's reject (REJECTED, -ECONNRESET, with its private data);
 * M, or no C after we asked for CRC, is refused (REJECTED, -ECONNREFUSED); after an enhanced request, a
 * reply that is not enhanced is refused (REJECTED, -ECONNRESET). Then the IRD/ORD (siw's relaxed
 * negotiation): our IRD becomes the peer's ORD and our ORD the peer's IRD, and a peer ORD over our
 * device's maximum IRD fails (CONNECT_ERROR, -EINVAL); in peer-to-peer mode the reply must name an RTR
 * we offered (else CONNECT_ERROR, -EINVAL). CRC is on when the reply has C. See {@link MpaFailure}.
 *
 * <p>siw ends a setup whose reply arrives with more bytes behind it (-EPROTO); this engine keeps them as
 * the start of the FPDU stream instead, since they can only be the peer's first FPDUs. siw would also
 * try to send a Terminate for a wrong key, a short IRD or no matching RTR; this engine only closes, as
 * the QP has no FPDU stream yet. Not thread safe.
 */
public final class MpaInitiator extends MpaEngine {
    private enum State { SENDING_REQUEST, AWAITING_REPLY, SENDING_RTR, DONE }

    private final int ird;
    private final int ord;
    private final byte[] privateData;
    private final boolean enhanced;
    private State state = State.SENDING_REQUEST;
    private MpaConnection pending;

    /**
     * Prepares a request, as {@code rdma_connect} would with these parameters.
     *
     * @param config      the local choices
     * @param ird         the IRD asked for: RDMA Reads this side will serve at once (rdma_cm's responder resources)
     * @param ord         the ORD asked for: RDMA Reads this side will issue at once (rdma_cm's initiator depth)
     * @param privateData the private data for the peer, at most 252 bytes with revision 2 (256 with 1)
     * @param peer        the peer's address, for messages
     * @throws VerbsException EINVAL if the private data is too long, ENOMEM if IRD or ORD exceed the
     *                        device's maximum (siw's {@code siw_connect})
     */
    public MpaInitiator(MpaConfig config, int ird, int ord, byte[] privateData, String peer) {
        super(config, peer);
        this.enhanced = config.revision() == MpaFrame.REVISION_2;
        int max = MpaFrame.maxUlpPrivateData(enhanced);
        if (privateData.length > max) {
            throw new VerbsException(Errno.EINVAL, "MPA request to " + this.peer + ": " + privateData.length
                    + " bytes of private data, at most " + max);
        }
        if (ird < 0 || ord < 0 || ird > config.maxIrd() || ord > config.maxOrd()) {
            throw new VerbsException(Errno.ENOMEM, "MPA request to " + this.peer + ": IRD " + ird + " and ORD "
                    + ord + " must be within the device's " + config.maxIrd() + " and " + config.maxOrd());
        }
        boolean p2p = enhanced && config.peerToPeer();
        this.ird = ird;
        this.ord = p2p && ord == 0 ? 1 : ord;
        this.privateData = privateData.clone();
    }

    private boolean peerToPeer() {
        return enhanced && config.peerToPeer() && config.rtrOffer() != 0;
    }

    @Override
    void start(long nowNs) {
        int flags = (config.crc() ? MpaFrame.FLAG_CRC : 0) | (enhanced ? MpaFrame.FLAG_ENHANCED : 0);
        int irdWord = ird | (peerToPeer() ? MpaFrame.IRD_PEER_TO_PEER : 0);
        int ordWord = ord | (peerToPeer() ? config.rtrOffer() : 0);
        queueFrame(false, flags, config.revision(), irdWord, ordWord, privateData);
        deadline(nowNs, config.replyTimeoutNs());
        state = State.AWAITING_REPLY;
    }

    @Override
    void progress(long nowNs) {
        if (state == State.AWAITING_REPLY) {
            MpaStatus status = decode(true);
            if (status == MpaStatus.COMPLETE) {
                decide();
            } else if (status != MpaStatus.NEED_MORE) {
                fail(malformed(status));
            }
        }
        if (state == State.SENDING_RTR && outboxEmpty()) {
            state = State.DONE;
            established(pending);
        }
    }

    private void decide() {
        MpaFrame f = frame;
        boolean bothEnhanced = enhanced && f.enhanced();
        long dataAt = bothEnhanced ? f.ulpPrivateDataOffset() : MpaFrame.HEADER_LENGTH;
        byte[] peerData = copy(dataAt, bothEnhanced ? f.ulpPrivateDataLength() : f.privateDataLength());
        if (f.reject()) {
            fail(MpaFailure.peerReject(step() + ": " + peer + " rejected the connection with "
                    + peerData.length + " bytes of private data", peerData));
            return;
        }
        if (config.crc() && !f.crc()) {
            fail(MpaFailure.of(REJECTED, Errno.ECONNREFUSED, step() + ": " + peer
                    + " replied without CRC after CRC was asked for"));
            return;
        }
        int negotiatedIrd = ird;
        int negotiatedOrd = ord;
        MpaRtr rtr = MpaRtr.NONE;
        if (enhanced) {
            if (!f.enhanced()) {
                fail(MpaFailure.of(REJECTED, Errno.ECONNRESET, step() + ": " + peer + " replied with revision "
                        + f.revision() + (f.revision() == MpaFrame.REVISION_2 ? " without enhanced setup" : "")
                        + " to an enhanced (revision 2) request"));
                return;
            }
            negotiatedIrd = f.ord();
            negotiatedOrd = f.ird();
            if (negotiatedIrd > ird && negotiatedIrd > config.maxIrd()) {
                fail(MpaFailure.of(CONNECT_ERROR, Errno.EINVAL, step() + ": " + peer + " wants " + negotiatedIrd
                        + " RDMA Reads in flight, over this device's IRD of at most " + config.maxIrd()));
                return;
            }
            if (peerToPeer()) {
                int offered = config.rtrOffer() & f.ordWord();
                if (offered == 0) {
                    fail(MpaFailure.of(CONNECT_ERROR, Errno.EINVAL, step() + ": " + peer
                            + " named no ready-to-receive message that was offered (peer-to-peer mode)"));
                    return;
                }
                rtr = MpaRtr.named(offered);
            }
        }
        consume(f.frameLength());
        pending = new MpaConnection(true, config.revision(), enhanced, f.crc(), negotiatedIrd, negotiatedOrd, rtr,
                peerData, carryOver(), peer);
        if (rtr != MpaRtr.NONE) {
            FpduEncoder encoder = new FpduEncoder(f.crc());
            MpaRtr chosen = rtr;
            queueFpdu(s -> chosen.encode(encoder, s, 0));
        }
        state = State.SENDING_RTR;
        noDeadline();
    }

    private MpaFailure malformed(MpaStatus status) {
        String what = switch (status) {
            case TRUNCATED -> null;
            case WRONG_KEY -> "the reply's key is not \"MPA ID Rep Frame\"";
            case BAD_REVISION -> "the reply's revision " + frame.revision() + " is not 1 or 2";
            case PRIVATE_DATA_TOO_LONG -> "the reply is too long: " + frame.privateDataLength()
                    + " bytes of private data, at most " + MpaFrame.MAX_PRIVATE_DATA;
            case MARKERS_REQUESTED -> "the reply asks for MPA markers, which are not supported";
            case ENHANCED_WITHOUT_IRD_ORD -> "the enhanced reply has no IRD/ORD words";
            default -> status.words();
        };
        if (status == MpaStatus.TRUNCATED) {
            return MpaFailure.of(REJECTED, Errno.ECONNRESET, step() + ": " + peer + " closed the connection after "
                    + held() + " bytes of the reply");
        }
        if (status == MpaStatus.MARKERS_REQUESTED) {
            return MpaFailure.of(REJECTED, Errno.ECONNREFUSED, step() + ": " + what + " (" + peer + ")");
        }
        return MpaFailure.of(CONNECT_ERROR, Errno.EINVAL, step() + ": " + what + " (" + peer + ")");
    }

    @Override
    MpaFailure timeout() {
        return MpaFailure.of(UNREACHABLE, Errno.ETIMEDOUT, step() + ": no complete reply from " + peer + " within "
                + TimeUnit.NANOSECONDS.toMillis(config.replyTimeoutNs()) + " ms (" + held() + " bytes arrived)");
    }

    @Override
    MpaFailure.CmEvent closedEvent() {
        return REJECTED;
    }

    @Override
    String step() {
        return switch (state) {
            case SENDING_REQUEST, AWAITING_REPLY -> "MPA request sent, awaiting the reply";
            case SENDING_RTR, DONE -> "MPA reply accepted, sending the ready-to-receive message";
        };
    }

    @Override
    public boolean wantsRead() {
        return state == State.AWAITING_REPLY && !failed() && !peerHasClosed() && inbox().hasRemaining();
    }

    @Override
    public boolean idle() {
        return failed() || connection() != null;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.util.concurrent.TimeUnit;

/**
 * The local side's choices for MPA connection setup, with siw's module defaults in
 * {@link #siwDefaults()}: revision 2 with enhanced setup, CRC not asked for (but used when the peer asks),
 * peer-to-peer mode off (honoured as responder), zero-length RDMA Write and Read offered as the
 * ready-to-receive message when peer-to-peer is on, IRD and ORD at most 128 ({@code SIW_MAX_IRD_QP},
 * {@code SIW_MAX_ORD_QP}), the initiator waits 10 s for the reply ({@code MPAREQ_TIMEOUT}) and the
 * responder 5 s for the request ({@code MPAREP_TIMEOUT}).
 *
 * @param revision         MPA revision of a request: 2 (enhanced, IRD/ORD carried) or 1
 * @param crc              whether to ask for CRC (initiator) or to demand it in the reply (responder); the
 *                         peer's request for CRC is honoured either way
 * @param peerToPeer       initiator: ask for peer-to-peer mode with a ready-to-receive message (revision 2)
 * @param rtrOffer         the ready-to-receive messages offered, {@link MpaFrame#ORD_WRITE_RTR} and/or
 *                         {@link MpaFrame#ORD_READ_RTR}
 * @param maxIrd           the device's largest IRD (inbound RDMA Reads in flight)
 * @param maxOrd           the device's largest ORD (outbound RDMA Reads in flight)
 * @param replyTimeoutNs   how long the initiator waits for the reply after sending the request
 * @param requestTimeoutNs how long the responder waits for the request after the TCP connection is
 *                         accepted, and for the ready-to-receive message after its reply
 */
public record MpaConfig(int revision, boolean crc, boolean peerToPeer, int rtrOffer, int maxIrd, int maxOrd,
                        long replyTimeoutNs, long requestTimeoutNs) {
    /** siw's wait for the MPA reply ({@code MPAREQ_TIMEOUT}, 10 s). */
    public static final long SIW_REPLY_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    /** siw's wait for the MPA request ({@code MPAREP_TIMEOUT}, 5 s). */
    public static final long SIW_REQUEST_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    /** siw's largest IRD and ORD per QP. */
    public static final int SIW_MAX_IRD_ORD = 128;

    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException if one is out of range
     */
    public MpaConfig {
        if (revision != MpaFrame.REVISION_1 && revision != MpaFrame.REVISION_2) {
            throw new IllegalArgumentException("MPA revision " + revision + ": must be 1 or 2");
        }
        if ((rtrOffer & ~(MpaFrame.ORD_WRITE_RTR | MpaFrame.ORD_READ_RTR)) != 0) {
            throw new IllegalArgumentException("RTR offer 0x" + Integer.toHexString(rtrOffer)
                    + ": only the zero-length RDMA Write (0x8000) and Read (0x4000) bits");
        }
        if (maxIrd < 0 || maxIrd > MpaFrame.IRD_ORD_MASK || maxOrd < 0 || maxOrd > MpaFrame.IRD_ORD_MASK) {
            throw new IllegalArgumentException("max IRD " + maxIrd + ", max ORD " + maxOrd + ": 0 to 16383");
        }
        if (replyTimeoutNs <= 0 || requestTimeoutNs <= 0) {
            throw new IllegalArgumentException("MPA timeouts must be positive");
        }
    }

    /** {@return siw's defaults} */
    public static MpaConfig siwDefaults() {
        return new MpaConfig(MpaFrame.REVISION_2, false, false, MpaFrame.ORD_WRITE_RTR | MpaFrame.ORD_READ_RTR,
                SIW_MAX_IRD_ORD, SIW_MAX_IRD_ORD, SIW_REPLY_TIMEOUT_NS, SIW_REQUEST_TIMEOUT_NS);
    }

    /**
     * {@return a copy with another revision}
     *
     * @param value 1 or 2
     */
    public MpaConfig withRevision(int value) {
        return new MpaConfig(value, crc, peerToPeer, rtrOffer, maxIrd, maxOrd, replyTimeoutNs, requestTimeoutNs);
    }

    /**
     * {@return a copy that asks for CRC or not}
     *
     * @param value whether to ask
     */
    public MpaConfig withCrc(boolean value) {
        return new MpaConfig(revision, value, peerToPeer, rtrOffer, maxIrd, maxOrd, replyTimeoutNs, requestTimeoutNs);
    }

    /**
     * {@return a copy that asks for peer-to-peer mode with these ready-to-receive messages}
     *
     * @param offer {@link MpaFrame#ORD_WRITE_RTR} and/or {@link MpaFrame#ORD_READ_RTR}
     */
    public MpaConfig withPeerToPeer(int offer) {
        return new MpaConfig(revision, crc, true, offer, maxIrd, maxOrd, replyTimeoutNs, requestTimeoutNs);
    }

    /**
     * {@return a copy with other timeouts}
     *
     * @param replyNs   the initiator's wait for the reply
     * @param requestNs the responder's wait for the request (and for the RTR)
     */
    public MpaConfig withTimeouts(long replyNs, long requestNs) {
        return new MpaConfig(revision, crc, peerToPeer, rtrOffer, maxIrd, maxOrd, replyNs, requestNs);
    }
}

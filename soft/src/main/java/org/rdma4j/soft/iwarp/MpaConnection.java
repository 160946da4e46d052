// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.nio.ByteBuffer;

/**
 * What an MPA setup that ended established agreed, for the QP to go to RTS with: the FPDU framing
 * (CRC), the Read queues (IRD, ORD), the RTR already exchanged, the peer's private data, and the bytes
 * that arrived after the last setup frame (the peer's first FPDUs, if it was fast), which belong to the
 * FPDU stream and must be fed to the QP's reassembler before anything read from the socket later.
 *
 * <p>After a {@link MpaRtr#READ} RTR the QP's queue 1 has used MSN 1: on the initiator the next Read
 * Request carries MSN 2 and the first Read Response to arrive (zero length, sink STag 0) answers the RTR
 * and completes nothing; on the responder the next Read Request expected carries MSN 2.
 *
 * @param initiator       whether this side sent the request
 * @param revision        the revision agreed (the request's)
 * @param enhanced        whether IRD/ORD were exchanged
 * @param crc             whether FPDUs carry CRC32c, both directions
 * @param ird             inbound RDMA Reads this side serves at once
 * @param ord             outbound RDMA Reads this side may have in flight
 * @param rtr             the RTR exchanged, {@link MpaRtr#NONE} without peer-to-peer mode
 * @param peerPrivateData the peer's private data, IRD/ORD words removed (a copy; never printed)
 * @param carryOver       the FPDU stream bytes already read, from position to limit (a copy)
 * @param peer            the peer's address, for messages
 */
public record MpaConnection(boolean initiator, int revision, boolean enhanced, boolean crc, int ird, int ord,
                            MpaRtr rtr, byte[] peerPrivateData, ByteBuffer carryOver, String peer) {
    /** Copies the arrays. */
    public MpaConnection {
        peerPrivateData = peerPrivateData.clone();
        carryOver = carryOver.asReadOnlyBuffer();
    }

    /** {@return a copy of the peer's private data} */
    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** {@return a read-only view of the carried-over bytes, from position to limit} */
    @Override
    public ByteBuffer carryOver() {
        return carryOver.duplicate();
    }

    @Override
    public String toString() {
        return "MPA " + (initiator ? "initiator" : "responder") + " connected with " + peer + ": revision "
                + revision + (enhanced ? " enhanced" : "") + ", CRC " + (crc ? "on" : "off") + ", IRD " + ird
                + ", ORD " + ord + ", RTR " + rtr + ", " + peerPrivateData.length + " bytes of private data, "
                + carryOver.remaining() + " bytes of FPDU stream carried over";
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

/**
 * An MPA request as the responder hands it to the program to accept or reject, with the values a
 * passive rdma_cm program gets in its CONNECT_REQUEST event over siw ({@code siw_proc_mpareq},
 * {@code siw_cm_upcall}): the peer's IRD becomes our initiator depth and the peer's ORD our responder
 * resources, each capped by the device's maximum; both are 0 for a request without enhanced setup.
 *
 * @param revision           the request's revision
 * @param enhanced           whether it carried IRD/ORD (revision 2 with E)
 * @param crc                whether the peer asked for CRC (then CRC is used)
 * @param peerToPeer         whether the peer asked for peer-to-peer mode (then an RTR will open the stream)
 * @param initiatorDepth     how many RDMA Reads we may have in flight to the peer: its IRD, capped
 * @param responderResources how many of the peer's RDMA Reads we must serve at once: its ORD, capped
 * @param privateData        the program's private data, IRD/ORD words removed (a copy; never printed)
 * @param peer               the peer's address, for messages
 */
public record MpaRequest(int revision, boolean enhanced, boolean crc, boolean peerToPeer, int initiatorDepth,
                         int responderResources, byte[] privateData, String peer) {
    /** Copies the private data. */
    public MpaRequest {
        privateData = privateData.clone();
    }

    /** {@return a copy of the private data} */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public String toString() {
        return "MPA request from " + peer + ": revision " + revision + (enhanced ? " enhanced" : "")
                + (crc ? ", CRC" : "") + (peerToPeer ? ", peer-to-peer" : "") + ", initiator depth "
                + initiatorDepth + ", responder resources " + responderResources + ", "
                + privateData.length + " bytes of private data";
    }
}

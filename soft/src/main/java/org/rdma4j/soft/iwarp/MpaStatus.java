// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

/**
 * What {@link MpaFrame#decode} made of the bytes it was given. {@link #COMPLETE} and
 * {@link #NEED_MORE} are the two normal outcomes; the others are the peer's protocol errors, after which
 * siw closes the connection (a responder first answers a request that asked for markers, or announced
 * an enhanced setup without IRD/ORD, with a reject frame). Each error names the LLP Terminate code a
 * connected peer would be told, {@link Terminate#MPA_INVALID_REQUEST_REPLY}.
 */
public enum MpaStatus {
    /** A whole frame is there; its fields and length are in the {@link MpaFrame}. */
    COMPLETE("a complete MPA frame"),
    /** The frame is not all there yet; {@link MpaFrame#missingBytes()} says how many more bytes to wait for. */
    NEED_MORE("an incomplete MPA frame: waiting for more bytes"),
    /** The stream ended before the frame was complete. */
    TRUNCATED("the stream ended inside the MPA frame"),
    /** The 16-byte key is neither the expected "MPA ID Req Frame" nor "MPA ID Rep Frame". */
    WRONG_KEY("the MPA key is not the one expected"),
    /** The revision is neither 1 (RFC 5044) nor 2 (RFC 6581). */
    BAD_REVISION("the MPA revision is not 1 or 2"),
    /** The private data length is over 256 bytes, siw's {@code MPA_MAX_PRIVDATA}. */
    PRIVATE_DATA_TOO_LONG("the MPA private data is longer than 256 bytes"),
    /** The M flag is set: markers, which siw refuses and so does this codec. */
    MARKERS_REQUESTED("the peer asks for MPA markers, which are not supported"),
    /** Revision 2 with the Enhanced flag but fewer than 4 bytes of private data for IRD and ORD. */
    ENHANCED_WITHOUT_IRD_ORD("an enhanced MPA frame without its IRD/ORD words");

    private final String words;

    MpaStatus(String words) {
        this.words = words;
    }

    /** {@return whether this is a protocol error rather than a complete or incomplete frame} */
    public boolean error() {
        return this != COMPLETE && this != NEED_MORE;
    }

    /** {@return what happened, in words} */
    public String words() {
        return words;
    }
}

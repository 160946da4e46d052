// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

/**
 * Why {@link FpduReassembler} stopped, with the Terminate layer, type and code to tell the peer
 * (RFC 5040 section 8 and siw's {@code siw_get_hdr}/{@code siw_get_trailer} choices). After any error
 * but {@link #NONE} the stream has lost its framing or its integrity: send the Terminate, close.
 */
public enum FpduError {
    /** No error. */
    NONE(-1, -1, -1, "no error"),
    /**
     * The ULPDU length is shorter than its opcode's header. RFC 5041 has no code for a malformed
     * segment length; like siw for segments it cannot place, this is a DDP local catastrophic error.
     */
    ULPDU_TOO_SHORT(Terminate.LAYER_DDP, Terminate.DDP_CATASTROPHIC, 0,
            "the ULPDU length is shorter than the header of its opcode"),
    /** The ULPDU length is over the negotiated maximum: a DDP local catastrophic error, as above. */
    ULPDU_TOO_LONG(Terminate.LAYER_DDP, Terminate.DDP_CATASTROPHIC, 0,
            "the ULPDU length is over the negotiated maximum"),
    /** A tagged segment with a DDP version other than 1 (siw: DDP, tagged, {@code DDP_ECODE_T_VERSION}). */
    DDP_VERSION_TAGGED(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_VERSION,
            "a tagged segment of DDP version other than 1"),
    /** An untagged segment with a DDP version other than 1 (siw: DDP, untagged, {@code DDP_ECODE_UT_VERSION}). */
    DDP_VERSION_UNTAGGED(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_VERSION,
            "an untagged segment of DDP version other than 1"),
    /** An RDMAP version other than 1 (siw: RDMAP, remote operation, {@code RDMAP_ECODE_VERSION}). */
    RDMAP_VERSION(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_VERSION,
            "an RDMAP version other than 1"),
    /** An opcode over 7 (siw: RDMAP, remote operation, {@code RDMAP_ECODE_OPCODE}). */
    UNKNOWN_OPCODE(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_OPCODE,
            "an RDMAP opcode siw does not implement"),
    /** The T flag contradicts the opcode (a tagged Send, an untagged Write): RDMAP unexpected opcode. */
    TAGGED_FLAG_MISMATCH(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_OPCODE,
            "the DDP tagged flag contradicts the RDMAP opcode"),
    /** The MPA CRC does not match (siw: LLP, MPA, {@code LLP_ECODE_RECEIVED_CRC}). */
    CRC_MISMATCH(Terminate.LAYER_LLP, Terminate.LLP_MPA, Terminate.MPA_CRC,
            "the MPA CRC does not match the FPDU");

    private final int layer;
    private final int etype;
    private final int ecode;
    private final String words;

    FpduError(int layer, int etype, int ecode, String words) {
        this.layer = layer;
        this.etype = etype;
        this.ecode = ecode;
        this.words = words;
    }

    /** {@return the Terminate layer, -1 for NONE} */
    public int layer() {
        return layer;
    }

    /** {@return the Terminate error type, -1 for NONE} */
    public int etype() {
        return etype;
    }

    /** {@return the Terminate error code, -1 for NONE} */
    public int ecode() {
        return ecode;
    }

    /**
     * {@return the Terminate Control word for this error}
     *
     * @param flags the M/D/R header flags for the copy the sender attaches, see {@link Terminate}
     */
    public int terminateControl(int flags) {
        return Terminate.controlWord(layer, etype, ecode, flags);
    }

    /** {@return what went wrong, in words, with the Terminate triple} */
    public String words() {
        return this == NONE ? words : words + ": " + Terminate.describe(layer, etype, ecode);
    }
}

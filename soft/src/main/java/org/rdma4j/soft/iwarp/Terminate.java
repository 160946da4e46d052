// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.INT;

import java.lang.foreign.MemorySegment;

/**
 * The RDMAP Terminate message (RFC 5040 section 4.8) and the error layer, type and code values of
 * RFC 5040 section 8 / RFC 5041 section 7 / RFC 5044 and RFC 6581, with siw's {@code enum term_elayer},
 * {@code rdmap_etype}, {@code rdmap_ecode}, {@code ddp_etype}, {@code ddp_ecode}, {@code llp_ecode} names.
 *
 * <pre>
 *  An untagged FPDU, L=1, opcode 7, queue 2, message offset 0 (offsets 0..19, see Ddp), then:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  | Layer | EType |  Error Code   |M|D|R|        Reserved         | 20 Terminate Control
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  DDP Segment Length (if M)    | the failed segment's DDP      | 24 (present if D or R)
 *  |  header from its control field (if D), then its RDMAP header (if R) ...
 * </pre>
 *
 * <p>The copied block has the layout of the failed FPDU's first bytes with its ULPDU length replaced
 * by the DDP Segment Length, so the {@link Ddp} and {@link Rdmap} offsets read it when added to
 * {@link #COPIED_HEADER_OFFSET}. siw copies 16 (tagged) or 20 (untagged) bytes for a DDP error, 20 or
 * 48 (Read Request) for an RDMAP remote protection error, and sends MSN 1. Stateless; safe for any
 * number of threads.
 */
public final class Terminate {
    /** Offset of the 32-bit Terminate Control word. */
    public static final int CONTROL_WORD_OFFSET = 20;
    /** Length of a Terminate FPDU header without the copied header (siw {@code struct iwarp_terminate}). */
    public static final int HEADER_LENGTH = 24;
    /** Offset of the copied DDP Segment Length and headers, when D or R is set. */
    public static final int COPIED_HEADER_OFFSET = 24;

    /** Control word: the layer bits (siw {@code TERM_MASK_LAYER}). */
    public static final int LAYER_MASK = 0xF000_0000;
    /** Control word: the error type bits (siw {@code TERM_MASK_ETYPE}). */
    public static final int ETYPE_MASK = 0x0F00_0000;
    /** Control word: the error code bits (siw {@code TERM_MASK_ECODE}). */
    public static final int ECODE_MASK = 0x00FF_0000;
    /** Control word: M, the DDP Segment Length field is valid (siw {@code TERM_FLAG_M}). */
    public static final int FLAG_SEGMENT_LENGTH_VALID = 0x8000;
    /** Control word: D, the failed DDP header is included (siw {@code TERM_FLAG_D}). */
    public static final int FLAG_DDP_HEADER = 0x4000;
    /** Control word: R, the failed RDMAP header is included (siw {@code TERM_FLAG_R}). */
    public static final int FLAG_RDMAP_HEADER = 0x2000;

    /** Layer 0: RDMAP (siw {@code TERM_ERROR_LAYER_RDMAP}). */
    public static final int LAYER_RDMAP = 0x0;
    /** Layer 1: DDP (siw {@code TERM_ERROR_LAYER_DDP}). */
    public static final int LAYER_DDP = 0x1;
    /** Layer 2: the lower layer protocol, MPA (siw {@code TERM_ERROR_LAYER_LLP}). */
    public static final int LAYER_LLP = 0x2;

    /** RDMAP error type: local catastrophic. */
    public static final int RDMAP_CATASTROPHIC = 0x0;
    /** RDMAP error type: remote protection error. */
    public static final int RDMAP_REMOTE_PROTECTION = 0x1;
    /** RDMAP error type: remote operation error. */
    public static final int RDMAP_REMOTE_OPERATION = 0x2;
    /** RDMAP code: invalid STag. */
    public static final int RDMAP_INVALID_STAG = 0x00;
    /** RDMAP code: base or bounds violation. */
    public static final int RDMAP_BASE_BOUNDS = 0x01;
    /** RDMAP code: access rights violation. */
    public static final int RDMAP_ACCESS_RIGHTS = 0x02;
    /** RDMAP code: STag not associated with this RDMAP stream. */
    public static final int RDMAP_STAG_NOT_ASSOCIATED = 0x03;
    /** RDMAP code: tagged offset wrap. */
    public static final int RDMAP_TO_WRAP = 0x04;
    /** RDMAP code: invalid RDMAP version. */
    public static final int RDMAP_VERSION = 0x05;
    /** RDMAP code: unexpected opcode. */
    public static final int RDMAP_OPCODE = 0x06;
    /** RDMAP code: catastrophic error localized to this stream. */
    public static final int RDMAP_CATASTROPHIC_STREAM = 0x07;
    /** RDMAP code: catastrophic error, global. */
    public static final int RDMAP_CATASTROPHIC_GLOBAL = 0x08;
    /** RDMAP code: STag cannot be invalidated. */
    public static final int RDMAP_CANNOT_INVALIDATE = 0x09;
    /** RDMAP code: unspecified. */
    public static final int RDMAP_UNSPECIFIED = 0xFF;

    /** DDP error type: local catastrophic (its code is 0). */
    public static final int DDP_CATASTROPHIC = 0x0;
    /** DDP error type: tagged buffer error. */
    public static final int DDP_TAGGED = 0x1;
    /** DDP error type: untagged buffer error. */
    public static final int DDP_UNTAGGED = 0x2;
    /** DDP tagged code: invalid STag. */
    public static final int DDP_T_INVALID_STAG = 0x00;
    /** DDP tagged code: base or bounds violation. */
    public static final int DDP_T_BASE_BOUNDS = 0x01;
    /** DDP tagged code: STag not associated with this stream. */
    public static final int DDP_T_STAG_NOT_ASSOCIATED = 0x02;
    /** DDP tagged code: tagged offset wrap. */
    public static final int DDP_T_TO_WRAP = 0x03;
    /** DDP tagged code: invalid DDP version. */
    public static final int DDP_T_VERSION = 0x04;
    /** DDP untagged code: invalid queue number. */
    public static final int DDP_U_INVALID_QN = 0x01;
    /** DDP untagged code: invalid MSN, no buffer available. */
    public static final int DDP_U_NO_BUFFER = 0x02;
    /** DDP untagged code: invalid MSN, out of range. */
    public static final int DDP_U_MSN_RANGE = 0x03;
    /** DDP untagged code: invalid message offset. */
    public static final int DDP_U_INVALID_MO = 0x04;
    /** DDP untagged code: message too long for the buffer. */
    public static final int DDP_U_TOO_LONG = 0x05;
    /** DDP untagged code: invalid DDP version. */
    public static final int DDP_U_VERSION = 0x06;

    /** LLP error type: MPA, the only one (siw {@code LLP_ETYPE_MPA}). */
    public static final int LLP_MPA = 0x0;
    /** MPA code: TCP connection lost. */
    public static final int MPA_STREAM_LOST = 0x01;
    /** MPA code: received MPA CRC does not match. */
    public static final int MPA_CRC = 0x02;
    /** MPA code: marker or FPDU pointer not at an FPDU start. */
    public static final int MPA_FPDU_START = 0x03;
    /** MPA code: invalid MPA request or reply frame. */
    public static final int MPA_INVALID_REQUEST_REPLY = 0x04;
    /** MPA v2 code: local catastrophic. */
    public static final int MPA_LOCAL_CATASTROPHIC = 0x05;
    /** MPA v2 code: insufficient IRD resources. */
    public static final int MPA_INSUFFICIENT_IRD = 0x06;
    /** MPA v2 code: no matching ready-to-receive message type. */
    public static final int MPA_NO_MATCHING_RTR = 0x07;

    private Terminate() {
    }

    /**
     * {@return a Terminate Control word}
     *
     * @param layer the layer, see {@link #LAYER_RDMAP}
     * @param etype the error type within the layer
     * @param ecode the error code within the type
     * @param flags any of {@link #FLAG_SEGMENT_LENGTH_VALID}, {@link #FLAG_DDP_HEADER}, {@link #FLAG_RDMAP_HEADER}
     */
    public static int controlWord(int layer, int etype, int ecode, int flags) {
        return (layer & 0xF) << 28 | (etype & 0xF) << 24 | (ecode & 0xFF) << 16
                | flags & (FLAG_SEGMENT_LENGTH_VALID | FLAG_DDP_HEADER | FLAG_RDMAP_HEADER);
    }

    /**
     * {@return the layer of a control word}
     *
     * @param word the control word
     */
    public static int layer(int word) {
        return (word & LAYER_MASK) >>> 28;
    }

    /**
     * {@return the error type of a control word}
     *
     * @param word the control word
     */
    public static int etype(int word) {
        return (word & ETYPE_MASK) >>> 24;
    }

    /**
     * {@return the error code of a control word}
     *
     * @param word the control word
     */
    public static int ecode(int word) {
        return (word & ECODE_MASK) >>> 16;
    }

    /**
     * {@return the Terminate Control word of the Terminate FPDU at {@code fpdu}}
     *
     * @param s the segment
     * @param fpdu where it starts
     */
    public static int controlWord(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + CONTROL_WORD_OFFSET);
    }

    /**
     * Writes a Terminate header (offsets 2 to 23): control field (untagged, last, opcode 7), reserved
     * word 0, queue 2, the MSN, message offset 0 and the control word. The ULPDU length is the encoder's.
     *
     * @param s    the segment
     * @param fpdu where the FPDU starts
     * @param msn  the message sequence number of queue 2 (siw sends 1: one Terminate per stream)
     * @param word the control word
     */
    public static void header(MemorySegment s, long fpdu, int msn, int word) {
        Ddp.control(s, fpdu, Rdmap.control(Rdmap.TERMINATE, true));
        Ddp.untaggedHeader(s, fpdu, 0, Ddp.QUEUE_TERMINATE, msn, 0);
        s.set(INT, fpdu + CONTROL_WORD_OFFSET, word);
    }

    /**
     * {@return layer, type and code in words, e.g. "LLP/MPA: received MPA CRC does not match (2/0/2)"}
     *
     * @param layer the layer
     * @param etype the error type
     * @param ecode the error code
     */
    public static String describe(int layer, int etype, int ecode) {
        String what = switch (layer) {
            case LAYER_RDMAP -> "RDMAP/" + rdmapType(etype) + ": " + rdmapCode(etype, ecode);
            case LAYER_DDP -> "DDP/" + ddpType(etype) + ": " + ddpCode(etype, ecode);
            case LAYER_LLP -> "LLP/" + (etype == LLP_MPA ? "MPA" : "type " + etype) + ": " + mpaCode(ecode);
            default -> "layer " + layer;
        };
        return what + " (" + layer + "/" + etype + "/" + ecode + ")";
    }

    private static String rdmapType(int etype) {
        return switch (etype) {
            case RDMAP_CATASTROPHIC -> "local catastrophic";
            case RDMAP_REMOTE_PROTECTION -> "remote protection";
            case RDMAP_REMOTE_OPERATION -> "remote operation";
            default -> "type " + etype;
        };
    }

    private static String rdmapCode(int etype, int ecode) {
        if (etype == RDMAP_CATASTROPHIC) {
            return ecode == RDMAP_UNSPECIFIED ? "unspecified" : "code " + ecode;
        }
        return switch (ecode) {
            case RDMAP_INVALID_STAG -> "invalid STag";
            case RDMAP_BASE_BOUNDS -> "base or bounds violation";
            case RDMAP_ACCESS_RIGHTS -> "access rights violation";
            case RDMAP_STAG_NOT_ASSOCIATED -> "STag not associated with the stream";
            case RDMAP_TO_WRAP -> "tagged offset wrap";
            case RDMAP_VERSION -> "invalid RDMAP version";
            case RDMAP_OPCODE -> "unexpected opcode";
            case RDMAP_CATASTROPHIC_STREAM -> "catastrophic error in the stream";
            case RDMAP_CATASTROPHIC_GLOBAL -> "catastrophic error, global";
            case RDMAP_CANNOT_INVALIDATE -> "STag cannot be invalidated";
            case RDMAP_UNSPECIFIED -> "unspecified";
            default -> "code " + ecode;
        };
    }

    private static String ddpType(int etype) {
        return switch (etype) {
            case DDP_CATASTROPHIC -> "local catastrophic";
            case DDP_TAGGED -> "tagged buffer";
            case DDP_UNTAGGED -> "untagged buffer";
            default -> "type " + etype;
        };
    }

    private static String ddpCode(int etype, int ecode) {
        if (etype == DDP_TAGGED) {
            return switch (ecode) {
                case DDP_T_INVALID_STAG -> "invalid STag";
                case DDP_T_BASE_BOUNDS -> "base or bounds violation";
                case DDP_T_STAG_NOT_ASSOCIATED -> "STag not associated with the stream";
                case DDP_T_TO_WRAP -> "tagged offset wrap";
                case DDP_T_VERSION -> "invalid DDP version";
                default -> "code " + ecode;
            };
        }
        if (etype == DDP_UNTAGGED) {
            return switch (ecode) {
                case DDP_U_INVALID_QN -> "invalid queue number";
                case DDP_U_NO_BUFFER -> "invalid MSN, no buffer available";
                case DDP_U_MSN_RANGE -> "invalid MSN, out of range";
                case DDP_U_INVALID_MO -> "invalid message offset";
                case DDP_U_TOO_LONG -> "message too long for the buffer";
                case DDP_U_VERSION -> "invalid DDP version";
                default -> "code " + ecode;
            };
        }
        return etype == DDP_CATASTROPHIC ? "unrecoverable segment" : "code " + ecode;
    }

    private static String mpaCode(int ecode) {
        return switch (ecode) {
            case MPA_STREAM_LOST -> "TCP connection lost";
            case MPA_CRC -> "received MPA CRC does not match";
            case MPA_FPDU_START -> "marker not at an FPDU start";
            case MPA_INVALID_REQUEST_REPLY -> "invalid MPA request or reply";
            case MPA_LOCAL_CATASTROPHIC -> "local catastrophic";
            case MPA_INSUFFICIENT_IRD -> "insufficient IRD resources";
            case MPA_NO_MATCHING_RTR -> "no matching RTR option";
            default -> "code " + ecode;
        };
    }
}

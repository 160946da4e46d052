// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;

/**
 * The 24-byte common MAD header, as static accessors over a MAD (it is always at offset 0).
 *
 * <pre>
 *   0               1               2               3
 *  +---------------+---------------+---------------+---------------+
 *  | BaseVersion 1 | MgmtClass     | ClassVersion  | R|  Method     |
 *  +---------------+---------------+---------------+---------------+
 *  |            Status             |        ClassSpecific          |
 *  +---------------+---------------+---------------+---------------+
 *  |                     TransactionID (64 bits)                   |
 *  +                                                               +
 *  |                                                               |
 *  +---------------+---------------+---------------+---------------+
 *  |          AttributeID          |           Reserved            |
 *  +---------------+---------------+---------------+---------------+
 *  |                      AttributeModifier                        |
 *  +---------------+---------------+---------------+---------------+
 * </pre>
 *
 * <p>Stateless; thread safe.
 */
public final class MadHeader {
    /** Length of the header. */
    public static final int LENGTH = 24;
    /** Offset of the base version (1). */
    public static final int BASE_VERSION_OFFSET = 0;
    /** Offset of the management class. */
    public static final int MGMT_CLASS_OFFSET = 1;
    /** Offset of the class version. */
    public static final int CLASS_VERSION_OFFSET = 2;
    /** Offset of the method (R bit 7, method bits 6:0). */
    public static final int METHOD_OFFSET = 3;
    /** Offset of the 16-bit status. */
    public static final int STATUS_OFFSET = 4;
    /** Offset of the 16-bit class-specific field. */
    public static final int CLASS_SPECIFIC_OFFSET = 6;
    /** Offset of the 64-bit transaction id. */
    public static final int TID_OFFSET = 8;
    /** Offset of the 16-bit attribute id. */
    public static final int ATTR_ID_OFFSET = 16;
    /** Offset of the 16 reserved bits. */
    public static final int RESERVED_OFFSET = 18;
    /** Offset of the 32-bit attribute modifier. */
    public static final int ATTR_MOD_OFFSET = 20;

    /** The base version of every MAD. */
    public static final int BASE_VERSION = 1;
    /** The communication management class. */
    public static final int CLASS_CM = 0x07;
    /** The CM class version of IBTA 1.2 (what the kernel's ib_cm speaks). */
    public static final int CM_CLASS_VERSION = 2;
    /** Method SEND: every CM message. */
    public static final int METHOD_SEND = 0x03;

    /** ConnectRequest. */
    public static final int ATTR_REQ = 0x0010;
    /** MessageReceiptAcknowledgement. */
    public static final int ATTR_MRA = 0x0011;
    /** ConnectReject. */
    public static final int ATTR_REJ = 0x0012;
    /** ConnectReply. */
    public static final int ATTR_REP = 0x0013;
    /** ReadyToUse. */
    public static final int ATTR_RTU = 0x0014;
    /** DisconnectRequest. */
    public static final int ATTR_DREQ = 0x0015;
    /** DisconnectReply. */
    public static final int ATTR_DREP = 0x0016;
    /** ServiceIDResolutionRequest. */
    public static final int ATTR_SIDR_REQ = 0x0017;
    /** ServiceIDResolutionResponse. */
    public static final int ATTR_SIDR_REP = 0x0018;
    /** LoadAlternatePath (not spoken; named so that it is recognised and ignored). */
    public static final int ATTR_LAP = 0x0019;
    /** AlternatePathResponse (not spoken). */
    public static final int ATTR_APR = 0x001A;

    private MadHeader() {
    }

    /**
     * Writes a CM MAD header (status, class-specific, reserved and modifier zero).
     *
     * @param mad the MAD
     * @param method the method
     * @param attributeId the attribute id
     * @param tid the transaction id
     */
    public static void writeCm(MemorySegment mad, int method, int attributeId, long tid) {
        mad.set(Be.BYTE, BASE_VERSION_OFFSET, (byte) BASE_VERSION);
        mad.set(Be.BYTE, MGMT_CLASS_OFFSET, (byte) CLASS_CM);
        mad.set(Be.BYTE, CLASS_VERSION_OFFSET, (byte) CM_CLASS_VERSION);
        mad.set(Be.BYTE, METHOD_OFFSET, (byte) method);
        mad.set(Be.SHORT, STATUS_OFFSET, (short) 0);
        mad.set(Be.SHORT, CLASS_SPECIFIC_OFFSET, (short) 0);
        mad.set(Be.LONG, TID_OFFSET, tid);
        mad.set(Be.SHORT, ATTR_ID_OFFSET, (short) attributeId);
        mad.set(Be.SHORT, RESERVED_OFFSET, (short) 0);
        mad.set(Be.INT, ATTR_MOD_OFFSET, 0);
    }

    /**
     * {@return the base version}
     *
     * @param mad the MAD
     */
    public static int baseVersion(MemorySegment mad) {
        return mad.get(Be.BYTE, BASE_VERSION_OFFSET) & 0xFF;
    }

    /**
     * {@return the management class}
     *
     * @param mad the MAD
     */
    public static int mgmtClass(MemorySegment mad) {
        return mad.get(Be.BYTE, MGMT_CLASS_OFFSET) & 0xFF;
    }

    /**
     * {@return the class version}
     *
     * @param mad the MAD
     */
    public static int classVersion(MemorySegment mad) {
        return mad.get(Be.BYTE, CLASS_VERSION_OFFSET) & 0xFF;
    }

    /**
     * {@return the method byte (with the response bit)}
     *
     * @param mad the MAD
     */
    public static int method(MemorySegment mad) {
        return mad.get(Be.BYTE, METHOD_OFFSET) & 0xFF;
    }

    /**
     * {@return the status}
     *
     * @param mad the MAD
     */
    public static int status(MemorySegment mad) {
        return mad.get(Be.SHORT, STATUS_OFFSET) & 0xFFFF;
    }

    /**
     * {@return the transaction id}
     *
     * @param mad the MAD
     */
    public static long transactionId(MemorySegment mad) {
        return mad.get(Be.LONG, TID_OFFSET);
    }

    /**
     * {@return the attribute id}
     *
     * @param mad the MAD
     */
    public static int attributeId(MemorySegment mad) {
        return mad.get(Be.SHORT, ATTR_ID_OFFSET) & 0xFFFF;
    }

    /**
     * {@return the attribute modifier}
     *
     * @param mad the MAD
     */
    public static int attributeModifier(MemorySegment mad) {
        return mad.get(Be.INT, ATTR_MOD_OFFSET);
    }

    /**
     * {@return the name of a CM attribute id, for logs}
     *
     * @param attributeId the id
     */
    public static String attributeName(int attributeId) {
        return switch (attributeId) {
            case ATTR_REQ -> "REQ";
            case ATTR_MRA -> "MRA";
            case ATTR_REJ -> "REJ";
            case ATTR_REP -> "REP";
            case ATTR_RTU -> "RTU";
            case ATTR_DREQ -> "DREQ";
            case ATTR_DREP -> "DREP";
            case ATTR_SIDR_REQ -> "SIDR_REQ";
            case ATTR_SIDR_REP -> "SIDR_REP";
            case ATTR_LAP -> "LAP";
            case ATTR_APR -> "APR";
            default -> "0x" + Integer.toHexString(attributeId);
        };
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;

/**
 * The gate every received MAD passes before a CM looks at it: a MAD that is not a well-formed CM
 * message of a kind we speak is refused with a reason code (the caller counts and drops it). Nothing
 * throws: hostile bytes cost a counter, not a thread.
 */
public final class MadCheck {
    /** Shorter than 256 bytes. */
    public static final int BAD_LENGTH = -1;
    /** Base version other than 1. */
    public static final int BAD_BASE_VERSION = -2;
    /** Management class other than CM (0x07). */
    public static final int BAD_CLASS = -3;
    /** CM class version other than 2. */
    public static final int BAD_CLASS_VERSION = -4;
    /** Method other than SEND. */
    public static final int BAD_METHOD = -5;
    /** An attribute id that is not a CM message we handle. */
    public static final int BAD_ATTRIBUTE = -6;
    /** A field out of its range (a REJ's ARI length over 72, a REQ's MTU or transport, a SIDR_REP's info length). */
    public static final int BAD_FIELD = -7;
    /** A REQ or SIDR_REQ for an rdma_cm IP service id whose private data does not start with a valid header. */
    public static final int BAD_CMA_HEADER = -8;

    private MadCheck() {
    }

    /**
     * Checks a received MAD.
     *
     * @param mad the received bytes
     * @param length how many bytes arrived
     * @return the attribute id (&gt; 0) when the MAD is a well-formed CM message, else a negative reason
     */
    public static int check(MemorySegment mad, long length) {
        try {
            if (mad == null || length < CmMessage.MAD_SIZE
                    || mad.byteSize() < CmMessage.MAD_SIZE) {
                return BAD_LENGTH;
            }
            if (MadHeader.baseVersion(mad) != MadHeader.BASE_VERSION) {
                return BAD_BASE_VERSION;
            }
            if (MadHeader.mgmtClass(mad) != MadHeader.CLASS_CM) {
                return BAD_CLASS;
            }
            if (MadHeader.classVersion(mad) != MadHeader.CM_CLASS_VERSION) {
                return BAD_CLASS_VERSION;
            }
            if (MadHeader.method(mad) != MadHeader.METHOD_SEND) {
                return BAD_METHOD;
            }
            int attr = MadHeader.attributeId(mad);
            return switch (attr) {
                case MadHeader.ATTR_REQ -> checkReq(mad);
                case MadHeader.ATTR_REJ ->
                    (mad.get(Be.BYTE, CmRej.REJECT_INFO_LENGTH_OFFSET) & 0xFF) >>> 1 > CmRej.ARI_LENGTH
                            ? BAD_FIELD : attr;
                case MadHeader.ATTR_SIDR_REP ->
                    (mad.get(Be.BYTE, SidrRep.INFO_LENGTH_OFFSET) & 0xFF) > 72 ? BAD_FIELD : attr;
                case MadHeader.ATTR_SIDR_REQ ->
                    ServiceId.carriesCmaHeader(mad.get(Be.LONG, SidrReq.SERVICE_ID_OFFSET))
                            && !CmaHeader.isValid(mad, SidrReq.PRIVATE_DATA_OFFSET) ? BAD_CMA_HEADER : attr;
                case MadHeader.ATTR_MRA, MadHeader.ATTR_REP, MadHeader.ATTR_RTU, MadHeader.ATTR_DREQ,
                     MadHeader.ATTR_DREP -> attr;
                default -> BAD_ATTRIBUTE;
            };
        } catch (RuntimeException e) {
            return BAD_LENGTH; // a segment that cannot be read as a MAD (closed, misaligned view)
        }
    }

    private static int checkReq(MemorySegment mad) {
        int transport = (mad.get(Be.BYTE, CmReq.OFFSET67) & 0xFF) >>> 1 & 3;
        int mtu = (mad.get(Be.BYTE, CmReq.OFFSET74) & 0xFF) >>> 4;
        if (transport == 2 || mtu < 1 || mtu > 5) {
            return BAD_FIELD;
        }
        long sid = mad.get(Be.LONG, CmReq.SERVICE_ID_OFFSET);
        if (ServiceId.carriesCmaHeader(sid) && !CmaHeader.isValid(mad, CmReq.PRIVATE_DATA_OFFSET)) {
            return BAD_CMA_HEADER;
        }
        return MadHeader.ATTR_REQ;
    }

    /**
     * {@return a name for a reason code, for counters and logs}
     *
     * @param code a negative result of {@link #check}
     */
    public static String reason(int code) {
        return switch (code) {
            case BAD_LENGTH -> "bad_length";
            case BAD_BASE_VERSION -> "bad_base_version";
            case BAD_CLASS -> "bad_class";
            case BAD_CLASS_VERSION -> "bad_class_version";
            case BAD_METHOD -> "bad_method";
            case BAD_ATTRIBUTE -> "bad_attribute";
            case BAD_FIELD -> "bad_field";
            case BAD_CMA_HEADER -> "bad_cma_header";
            default -> code >= 0 ? "ok" : "unknown";
        };
    }
}

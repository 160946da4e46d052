// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The network-order value layouts every flyweight in this package, and the iWARP codecs
 * ({@code soft.iwarp}), read and write with (RoCE and RFC 5040/5041/5044 fields alike are in network
 * order; the module does not export this package).
 *
 * <p>Headers sit at arbitrary offsets in a frame, so all layouts are unaligned.
 * Stateless; safe for any number of threads.
 */
public final class BigEndian {
    public static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Mask of a 24-bit field (QPN, PSN, MSN) held in the low bits of a 32-bit word. */
    static final int U24 = 0x00FF_FFFF;

    private BigEndian() {
    }
}

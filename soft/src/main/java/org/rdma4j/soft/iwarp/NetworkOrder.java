// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The value layouts the iWARP codecs read and write with: big-endian for every header field
 * (RFC 5040/5041/5044 fields are in network order), little-endian only for the MPA CRC bytes
 * (see {@link Crc32c}). Headers sit at arbitrary stream offsets, so all layouts are unaligned.
 * Stateless; safe for any number of threads.
 */
final class NetworkOrder {
    static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt INT_LITTLE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private NetworkOrder() {
    }
}

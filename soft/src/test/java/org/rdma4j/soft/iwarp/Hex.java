// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/** Hand-written byte sequences for the known-answer tests: hex with spaces, and the JDK's CRC32c. */
final class Hex {
    private Hex() {
    }

    static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    static MemorySegment segment(String hex) {
        return MemorySegment.ofArray(bytes(hex));
    }

    static String of(byte[] bytes) {
        return HexFormat.ofDelimiter(" ").formatHex(bytes);
    }

    static String of(MemorySegment s) {
        return of(s.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    /** {@return the bytes with the MPA CRC field (last four bytes) set from the JDK's CRC32C, low byte first} */
    static byte[] withCrc(byte[] fpdu) {
        CRC32C c = new CRC32C();
        c.update(fpdu, 0, fpdu.length - 4);
        long v = c.getValue();
        for (int i = 0; i < 4; i++) {
            fpdu[fpdu.length - 4 + i] = (byte) (v >>> (8 * i));
        }
        return fpdu;
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}

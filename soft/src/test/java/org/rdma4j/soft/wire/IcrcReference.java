// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import java.io.ByteArrayOutputStream;
import java.util.zip.CRC32;

/**
 * A deliberately naive ICRC written straight from WIRE.md over byte arrays, to cross-check
 * {@link Icrc} on packets no capture covers.
 */
final class IcrcReference {
    private IcrcReference() {
    }

    /** ICRC of a whole packet (IP header at 0, ICRC in the last 4 bytes). */
    static int of(byte[] packet, boolean maskBthByte4) {
        byte[] p = packet.clone();
        int ipLength;
        if ((p[0] & 0xF0) == 0x40) {
            ipLength = (p[0] & 0x0F) * 4;
            p[1] = (byte) 0xFF;                 // TOS
            p[8] = (byte) 0xFF;                 // TTL
            p[10] = (byte) 0xFF;                // header checksum
            p[11] = (byte) 0xFF;
        } else {
            ipLength = 40;
            p[0] |= 0x0F;                       // traffic class, flow label
            p[1] = (byte) 0xFF;
            p[2] = (byte) 0xFF;
            p[3] = (byte) 0xFF;
            p[7] = (byte) 0xFF;                 // hop limit
        }
        p[ipLength + 6] = (byte) 0xFF;          // UDP checksum
        p[ipLength + 7] = (byte) 0xFF;
        if (maskBthByte4) {
            p[ipLength + 8 + 4] = (byte) 0xFF;  // FECN, BECN, reserved
        }
        ByteArrayOutputStream covered = new ByteArrayOutputStream();
        covered.writeBytes(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1});
        covered.write(p, 0, p.length - 4);
        CRC32 crc = new CRC32();
        crc.update(covered.toByteArray());
        return (int) crc.getValue();
    }

    /** The ICRC as stored: least-significant byte first. */
    static byte[] wireBytes(int icrc) {
        return new byte[] {(byte) icrc, (byte) (icrc >>> 8), (byte) (icrc >>> 16), (byte) (icrc >>> 24)};
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rdma4j.tools.text.PeerText;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpType;

/**
 * One queue pair's address as the ibv_*_pingpong tools exchange it over TCP: LID, QPN, PSN and GID,
 * sent as the 51 characters {@code %04x:%06x:%06x:} + 32 hex digits of the GID, then a NUL: 52 bytes.
 *
 * <p>The GID text is made per 32-bit word: each four bytes of the GID are read as a big-endian number
 * and printed with eight hex digits (rdma-core's {@code gid_to_wire_gid} takes the word in host order
 * and applies {@code htobe32}, and {@code wire_gid_to_gid} undoes it with {@code be32toh}). On every
 * host that comes out as the 16 GID bytes in wire order, two hex digits each.
 *
 * <p>The message is a {@link QpEndpoint} without the fields both sides take from their flags (QP
 * type, path MTU, Q_Key): {@link #of} and {@link #toEndpoint} convert, so the bring-up is the verbs
 * guided path while the bytes stay those of the C tools.
 */
record Dest(int lid, int qpn, int psn, Gid gid) {
    /** Bytes of one address message, the NUL included. */
    static final int WIRE_BYTES = 52;
    /** An unused slot (ibv_srq_pingpong sends 256 addresses, the ones past its QPs all zero). */
    static final Dest NONE = new Dest(0, 0, 0, Gid.ZERO);

    private static final Pattern LINE = Pattern.compile(
            "([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,8}):([0-9a-fA-F]{32})");

    /** The address of {@code e} (its LID, QPN, PSN and GID). */
    static Dest of(QpEndpoint e) {
        return new Dest(e.lid(), e.qpn(), e.psn(), e.gid());
    }

    /** This address as an endpoint of {@code type} with the agreed {@code mtu} and {@code qkey}. */
    QpEndpoint toEndpoint(QpType type, Mtu mtu, int qkey) {
        return new QpEndpoint(type, lid, qpn, psn, gid, mtu, qkey);
    }

    /** The 52-byte message. */
    byte[] toWire() {
        String text = String.format(Locale.ROOT, "%04x:%06x:%06x:%s", lid, qpn, psn, wireGid(gid));
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        if (b.length != WIRE_BYTES - 1) {
            throw new IllegalStateException("address does not fit the message: " + text);
        }
        byte[] msg = new byte[WIRE_BYTES];
        System.arraycopy(b, 0, msg, 0, b.length);
        return msg;
    }

    /**
     * Parses a received message (text up to the first NUL).
     *
     * @throws IllegalArgumentException if it is not {@code LID:QPN:PSN:GID} with a 16-bit LID, 24-bit QPN
     *     and PSN and 32 hex digits of GID
     */
    static Dest parse(byte[] msg) {
        int end = 0;
        while (end < msg.length && msg[end] != 0) {
            end++;
        }
        String text = new String(msg, 0, end, StandardCharsets.ISO_8859_1);
        Matcher m = LINE.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("\"" + PeerText.printable(text) + "\" is not LID:QPN:PSN:GID");
        }
        long lid = Long.parseLong(m.group(1), 16);
        long qpn = Long.parseLong(m.group(2), 16);
        long psn = Long.parseLong(m.group(3), 16);
        if (lid > 0xFFFF || qpn > 0xFFFFFF || psn > 0xFFFFFF) {
            throw new IllegalArgumentException("\"" + PeerText.printable(text) + "\": LID is 16 bits, QPN and PSN 24 bits");
        }
        return new Dest((int) lid, (int) qpn, (int) psn, parseWireGid(m.group(4)));
    }

    /** The GID as 32 hex digits, one big-endian 32-bit word at a time (see the class comment). */
    static String wireGid(Gid gid) {
        StringBuilder sb = new StringBuilder(32);
        for (int w = 0; w < 4; w++) {
            int word = 0;
            for (int i = 0; i < 4; i++) {
                word = word << 8 | (gid.byteAt(4 * w + i) & 0xFF);
            }
            sb.append(String.format(Locale.ROOT, "%08x", word));
        }
        return sb.toString();
    }

    /** The inverse of {@link #wireGid}: four words of eight hex digits, each stored big-endian. */
    static Gid parseWireGid(String hex) {
        if (hex.length() != 32) {
            throw new IllegalArgumentException("a wire GID has 32 hex digits: " + hex);
        }
        byte[] raw = new byte[Gid.LENGTH];
        for (int w = 0; w < 4; w++) {
            int word = Integer.parseUnsignedInt(hex, 8 * w, 8 * w + 8, 16);
            for (int i = 0; i < 4; i++) {
                raw[4 * w + i] = (byte) (word >>> (24 - 8 * i));
            }
        }
        return Gid.of(raw);
    }

    /** The low 64 bits of the GID, non-zero when the tools put a GRH in the address vector. */
    boolean hasInterfaceId() {
        for (int i = 8; i < Gid.LENGTH; i++) {
            if (gid.byteAt(i) != 0) {
                return true;
            }
        }
        return false;
    }
}

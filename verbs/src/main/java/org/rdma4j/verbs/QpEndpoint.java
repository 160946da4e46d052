// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * What the other side needs to know about a queue pair to talk to it: the value two peers exchange
 * out of band (a TCP socket, a file, a test's local variable) between
 * {@link PreparedQueuePair#endpoint()} and {@link PreparedQueuePair#handshake(QpEndpoint)}. Immutable.
 *
 * <p>Text form ({@link #toString()}, {@link #parse}), seven fields separated by {@code ':'}, numbers in
 * lowercase hex with the widths given:
 * <pre>
 * RC:0000:000011:a1b2c3:fd000000000000000000000000000001:1024:00000000
 * type:lid(4):qpn(6):psn(6):gid(32):path MTU in bytes (decimal):qkey(8)
 * </pre>
 * Byte form ({@link #toBytes()}, {@link #fromBytes}), {@value #BYTES} bytes, big-endian:
 * <pre>
 * 0      version (1)      1  QP type (ibv_qp_type: RC 2, UC 3, UD 4)
 * 2      MTU (ibv_mtu 1..5) 3  0
 * 4..5   LID              6..7  0
 * 8..11  QPN              12..15 PSN
 * 16..19 Q_Key            20..35 GID (wire order)
 * </pre>
 *
 * @param type the QP type; a peer of another type refuses the endpoint
 * @param lid  the port's LID (0 on RoCE)
 * @param qpn  the 24-bit queue pair number
 * @param psn  the 24-bit PSN this QP sends with first (the peer's receive PSN)
 * @param gid  the GID the QP sends from (its routable address on RoCE)
 * @param mtu  the largest path MTU this side accepts; the pair uses the smaller of both
 * @param qkey the Q_Key (UD; 0 for connected QPs)
 */
public record QpEndpoint(QpType type, int lid, int qpn, int psn, Gid gid, Mtu mtu, int qkey) {
    /** Length of the byte form. */
    public static final int BYTES = 36;
    private static final int VERSION = 1;

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException for a null type, GID or MTU, a LID of more than 16 bits or a QPN
     *     or PSN of more than 24 bits
     */
    public QpEndpoint {
        if (type == null || gid == null || mtu == null) {
            throw new IllegalArgumentException("type, gid and mtu are required");
        }
        if ((lid & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("LID is 16 bits: " + lid);
        }
        if ((qpn & ~0xFFFFFF) != 0 || (psn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("QPN and PSN are 24 bits: qpn " + qpn + ", psn " + psn);
        }
    }

    /** {@return the text form (see the class comment)} */
    @Override
    public String toString() {
        return String.format("%s:%04x:%06x:%06x:%s:%d:%08x", type, lid, qpn, psn, gid.toHex(), mtu.bytes(), qkey);
    }

    /**
     * Reads the text form.
     *
     * @param text the text form (surrounding white space ignored)
     * @return the endpoint
     * @throws IllegalArgumentException for anything else
     */
    public static QpEndpoint parse(String text) {
        String[] f = text.strip().split(":", -1);
        if (f.length != 7 || f[1].length() != 4 || f[2].length() != 6 || f[3].length() != 6 || f[4].length() != 32
                || f[6].length() != 8) {
            throw new IllegalArgumentException("not a QP endpoint (TYPE:LID:QPN:PSN:GID:MTU:QKEY): " + text);
        }
        try {
            QpType type = QpType.valueOf(f[0]);
            Mtu mtu = Mtu.ofBytes(Integer.parseInt(f[5]));
            if (mtu == null) {
                throw new IllegalArgumentException("not a path MTU: " + f[5]);
            }
            return new QpEndpoint(type, HexFormat.fromHexDigits(f[1]), HexFormat.fromHexDigits(f[2]),
                    HexFormat.fromHexDigits(f[3]), Gid.of(HexFormat.of().parseHex(f[4])), mtu,
                    (int) HexFormat.fromHexDigitsToLong(f[6]));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a QP endpoint (TYPE:LID:QPN:PSN:GID:MTU:QKEY): " + text, e);
        }
    }

    /** {@return the byte form (see the class comment), {@value #BYTES} bytes} */
    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(BYTES);
        b.put((byte) VERSION).put((byte) type.value()).put((byte) mtu.value()).put((byte) 0);
        b.putShort((short) lid).putShort((short) 0);
        b.putInt(qpn).putInt(psn).putInt(qkey);
        b.put(gid.bytes());
        return b.array();
    }

    /**
     * Reads the byte form.
     *
     * @param bytes the {@value #BYTES} bytes
     * @return the endpoint
     * @throws IllegalArgumentException for a wrong length, version, type or MTU
     */
    public static QpEndpoint fromBytes(byte[] bytes) {
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("a QP endpoint has " + BYTES + " bytes, got " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int version = b.get() & 0xFF;
        if (version != VERSION) {
            throw new IllegalArgumentException("QP endpoint version " + version + ", expected " + VERSION);
        }
        int typeValue = b.get() & 0xFF;
        QpType type = null;
        for (QpType t : QpType.values()) {
            if (t.value() == typeValue) {
                type = t;
            }
        }
        Mtu mtu = Mtu.ofValue(b.get() & 0xFF);
        if (type == null || mtu == null) {
            throw new IllegalArgumentException("bad QP type " + typeValue + " or MTU in a QP endpoint");
        }
        b.get();
        int lid = b.getShort() & 0xFFFF;
        b.getShort();
        int qpn = b.getInt();
        int psn = b.getInt();
        int qkey = b.getInt();
        byte[] gid = new byte[Gid.LENGTH];
        b.get(gid);
        return new QpEndpoint(type, lid, qpn, psn, Gid.of(gid), mtu, qkey);
    }
}

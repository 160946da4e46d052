// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.rdma4j.tools.text.PeerText;
import org.rdma4j.verbs.Gid;

/**
 * One QP's address as perftest exchanges it over TCP (its {@code struct pingpong_dest}), and the two
 * fixed-size ASCII messages that carry it: without a GID (IB, 59 bytes with the NUL)
 * <pre>LLLL:OOOO:QQQQQQ:PPPPPP:RRRRRRRR:VVVVVVVVVVVVVVVV:SSSSSSSS\0</pre>
 * and with one (RoCE, 108 bytes)
 * <pre>LLLL:OOOO:QQQQQQ:PPPPPP:RRRRRRRR:VVVVVVVVVVVVVVVV:gg:gg:...:gg:SSSSSSSS:\0</pre>
 * (LID, outstanding reads, QPN, PSN, rkey, virtual address, 16 GID bytes, SRQ number; lower-case hex).
 * Whether the GID form is used is not in the message: each side decides it from its own link (a RoCE
 * port always sends the GID form), so both sides must agree. Immutable.
 *
 * @param lid LID of the port (0 on RoCE)
 * @param outReads outstanding RDMA reads/atomics the QP allows (perftest's out_reads)
 * @param qpn QP number (24 bits)
 * @param psn first packet sequence number (24 bits)
 * @param rkey rkey of the buffer the peer may write/read/atomically update
 * @param vaddr address in that buffer where the peer's operations go
 * @param gid GID of the port, or {@link Gid#ZERO}
 * @param srqn SRQ number (XRC/DC only; 0 here)
 */
record PerfDest(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, Gid gid, int srqn) {
    /** Bytes of the message without a GID, NUL included (perftest's KEY_MSG_SIZE). */
    static final int KEY_MSG_SIZE = 59;
    /** Bytes of the message with a GID, NUL included (perftest's KEY_MSG_SIZE_GID). */
    static final int KEY_MSG_SIZE_GID = 108;

    /** The message as sent: {@link #KEY_MSG_SIZE_GID} or {@link #KEY_MSG_SIZE} bytes. */
    byte[] toWire(boolean withGid) {
        StringBuilder sb = new StringBuilder(KEY_MSG_SIZE_GID);
        sb.append(String.format(Locale.ROOT, "%04x:%04x:%06x:%06x:%08x:%016x:", lid & 0xffff, outReads & 0xffff,
                qpn & 0xffffff, psn & 0xffffff, rkey, vaddr));
        if (withGid) {
            for (int i = 0; i < Gid.LENGTH; i++) {
                sb.append(String.format(Locale.ROOT, "%02x:", gid.byteAt(i) & 0xff));
            }
            sb.append(String.format(Locale.ROOT, "%08x:", srqn));
        } else {
            sb.append(String.format(Locale.ROOT, "%08x", srqn));
        }
        byte[] text = sb.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] msg = new byte[withGid ? KEY_MSG_SIZE_GID : KEY_MSG_SIZE];
        System.arraycopy(text, 0, msg, 0, Math.min(text.length, msg.length - 1));
        return msg;
    }

    /**
     * Parses a message of either form; {@code withGid} says which is expected.
     *
     * @throws IllegalArgumentException with perftest's "Couldn't parse line <...>" text when malformed
     */
    static PerfDest fromWire(byte[] msg, boolean withGid) {
        int end = 0;
        while (end < msg.length && msg[end] != 0) {
            end++;
        }
        String text = new String(msg, 0, end, StandardCharsets.US_ASCII);
        String[] f = text.split(":", -1);
        int need = withGid ? 6 + Gid.LENGTH + 1 : 7;
        if (f.length < need) {
            throw new IllegalArgumentException("Couldn't parse line <" + PeerText.printable(text) + ">");
        }
        try {
            int lid = Integer.parseInt(f[0], 16);
            int outReads = Integer.parseInt(f[1], 16);
            int qpn = Integer.parseInt(f[2], 16);
            int psn = Integer.parseInt(f[3], 16);
            int rkey = Integer.parseUnsignedInt(f[4], 16);
            long vaddr = Long.parseUnsignedLong(f[5], 16);
            Gid gid = Gid.ZERO;
            int srqn;
            if (withGid) {
                byte[] raw = new byte[Gid.LENGTH];
                for (int i = 0; i < Gid.LENGTH; i++) {
                    raw[i] = (byte) Integer.parseInt(f[6 + i], 16);
                }
                gid = Gid.of(raw);
                srqn = Integer.parseUnsignedInt(f[6 + Gid.LENGTH], 16);
            } else {
                srqn = Integer.parseUnsignedInt(f[6], 16);
            }
            return new PerfDest(lid, outReads, qpn, psn, rkey, vaddr, gid, srqn);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Couldn't parse line <" + PeerText.printable(text) + ">", e);
        }
    }

    /** Bytes of the binary form (perftest 4.5's sizeof(struct pingpong_dest) on 64-bit Linux). */
    static final int STRUCT_SIZE = 56;

    /**
     * The binary form -R sends over the connection manager's QP (perftest's rdma_write_keys built with
     * endian.h): big-endian lid, out_reads, qpn, psn, rkey at 0..19, 4 bytes of padding, vaddr at 24,
     * the 16 GID bytes at 32, srqn at 48 and the GID index at 52.
     * (perftest releases after 4.5 added a field, making it 64 bytes: those peers are refused by size.)
     */
    byte[] toStruct() {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(STRUCT_SIZE);
        b.putInt(0, lid).putInt(4, outReads).putInt(8, qpn).putInt(12, psn).putInt(16, rkey).putLong(24, vaddr);
        for (int i = 0; i < Gid.LENGTH; i++) {
            b.put(32 + i, gid.byteAt(i));
        }
        b.putInt(48, srqn); // the GID index at 52 stays 0: with -R the connection manager routes, nobody reads it
        return b.array();
    }

    /** Parses the binary form ({@link #STRUCT_SIZE} bytes; the padding and GID index are ignored). */
    static PerfDest fromStruct(byte[] msg) {
        if (msg.length != STRUCT_SIZE) {
            throw new IllegalArgumentException("a key message of " + msg.length + " bytes, not " + STRUCT_SIZE);
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(msg);
        byte[] raw = new byte[Gid.LENGTH];
        b.get(32, raw);
        return new PerfDest(b.getInt(0), b.getInt(4), b.getInt(8), b.getInt(12), b.getInt(16), b.getLong(24),
                Gid.of(raw), b.getInt(48));
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A 16-byte global identifier ({@code union ibv_gid}). On RoCEv2 it is an IPv6 address or an
 * IPv4-mapped address ({@code ::ffff:a.b.c.d}). Immutable.
 */
public final class Gid {
    /** The size of a GID in bytes. */
    public static final int LENGTH = 16;
    /** The all-zero GID, which marks an empty GID table entry. */
    public static final Gid ZERO = new Gid(new byte[LENGTH]);

    private final byte[] raw;
    /** Computed once: GIDs key the soft device's routes and groups. */
    private final int hash;

    private Gid(byte[] raw) {
        this.raw = raw;
        this.hash = Arrays.hashCode(raw);
    }

    /**
     * A GID from its 16 bytes in wire order.
     *
     * @param raw the bytes (copied)
     * @return the GID
     * @throws IllegalArgumentException unless {@code raw} has 16 bytes
     */
    public static Gid of(byte[] raw) {
        if (raw.length != LENGTH) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /**
     * The GID of an IP address, as the kernel makes a RoCE v2 GID of an interface address.
     *
     * @param address the address
     * @return IPv6 as is, IPv4 as {@code ::ffff:a.b.c.d}
     */
    public static Gid of(InetAddress address) {
        byte[] a = address.getAddress();
        if (address instanceof Inet4Address) {
            byte[] g = new byte[LENGTH];
            g[10] = (byte) 0xff;
            g[11] = (byte) 0xff;
            System.arraycopy(a, 0, g, 12, 4);
            return new Gid(g);
        }
        return new Gid(a);
    }

    /**
     * Parses 32 hex digits (the ibv_*_pingpong wire form) or an IPv6/IPv4 textual address (never a
     * host name: nothing is looked up).
     *
     * @param text the text
     * @return the GID
     * @throws IllegalArgumentException if {@code text} is neither
     */
    public static Gid parse(String text) {
        if (text.length() == 32 && text.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            return new Gid(HexFormat.of().parseHex(text));
        }
        try {
            if (!text.contains(":") && !text.matches("[0-9.]+")) {
                throw new IllegalArgumentException("not a GID: " + text);
            }
            return of(InetAddress.getByName(text));
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not a GID: " + text, e);
        }
    }

    /** {@return a copy of the 16 bytes in wire order} */
    public byte[] bytes() {
        return raw.clone();
    }

    /**
     * One byte, without copying the array.
     *
     * @param i 0 to 15, in wire order
     * @return the byte
     */
    public byte byteAt(int i) {
        return raw[i];
    }

    /** {@return whether every byte is 0: the value of an empty GID table entry} */
    public boolean isZero() {
        return Arrays.equals(raw, ZERO.raw);
    }

    /** {@return whether this is an IPv4-mapped GID, {@code ::ffff:a.b.c.d}} */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /**
     * True for a multicast GID as the kernel's rdma_is_multicast_addr sees it: {@code ff00::/8}, or an
     * IPv4-mapped address in 224.0.0.0/4.
     *
     * @return whether the GID names a multicast group ({@link QueuePair#attachMcast})
     */
    public boolean isMulticast() {
        return raw[0] == (byte) 0xFF || (isIpv4Mapped() && (raw[12] & 0xF0) == 0xE0);
    }

    /** {@return the IP address this GID stands for: IPv4 for a mapped GID, else IPv6} */
    public InetAddress toInetAddress() {
        try {
            if (isIpv4Mapped()) {
                return InetAddress.getByAddress(Arrays.copyOfRange(raw, 12, 16));
            }
            return Inet6Address.getByAddress(null, raw, null);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** {@return 32 lowercase hex digits in wire order, as ibv_*_pingpong exchange them} */
    public String toHex() {
        return HexFormat.of().formatHex(raw);
    }

    /** {@return the form ibv_devinfo -v prints: eight groups of four hex digits separated by colons} */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < LENGTH; i += 2) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(String.format("%02x%02x", raw[i] & 0xff, raw[i + 1] & 0xff));
        }
        return sb.toString();
    }

    /**
     * Equal when the 16 bytes are.
     *
     * @param o the other object
     * @return whether {@code o} is a GID with the same bytes
     */
    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof Gid g && g.hash == hash && Arrays.equals(raw, g.raw);
    }

    /** {@return a hash of the 16 bytes} */
    @Override
    public int hashCode() {
        return hash;
    }
}

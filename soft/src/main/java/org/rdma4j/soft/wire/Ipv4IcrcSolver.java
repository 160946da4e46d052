// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.BYTE;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Checks the ICRC of an IPv4 RoCEv2 packet received on a UDP socket, which hides the one header
 * field the ICRC covers that the receiver cannot rebuild: the 16-bit Identification.
 *
 * <p>Everything else the ICRC covers is known to the receiver: the addresses (the sender's from
 * {@code recvmmsg}, ours from the bound socket), the ports, the lengths (from the datagram length),
 * the protocol, IHL 5, no fragment offset, and the DF flag, which every RoCEv2 sender sets (rxe's
 * {@code prepare4}, RoCE NICs, rdma4j in every mode); TOS, TTL and both checksums are masked.
 * CRC-32 is affine over GF(2), so the ICRC of the packet with Identification {@code id} is
 * <pre>
 *   ICRC(id) = ICRC(0) ^ Z^k(A(id))
 * </pre>
 * where {@code A} is the linear map from the 16 Identification bits to the CRC register right after
 * the flags byte, and {@code Z^k} the linear map of the {@code k} covered bytes that follow (the
 * register advanced over zero bytes). The receiver computes {@code ICRC(0)} (one CRC pass, as for
 * IPv6), undoes {@code Z^k} with precomputed powers of {@code Z^-1} (at most 16 matrix-vector steps
 * for {@code k < 65536}), and solves the 32 equations for the 16 unknowns with a precomputed
 * elimination. 16 check bits remain: random corruption passes with probability 2^-16, and every
 * single-bit error in the bytes the receiver sees or rebuilds is caught for packets up to a 4 KiB
 * MTU (shown exhaustively by the tests). The solved Identification is returned, which lets tests
 * recover the Identification of captured rxe packets from the ICRC alone.
 *
 * <p>Allocation-free after construction. Not thread safe; one instance per thread.
 */
public final class Ipv4IcrcSolver {
    /** What {@link #solve} returns when no Identification reproduces the ICRC. */
    public static final int NONE = -1;

    private static final int UNKNOWNS = 16;
    /** Covered bytes up to and including the flags byte (the first byte of flags/fragment offset). */
    private static final int BYTES_THROUGH_FLAGS = 8 + Ipv4Header.FLAGS_FRAGMENT_OFFSET + 1;
    private static final int MAX_POWER = 16;

    private static final int[] TABLE = new int[256];
    /** Column j: the CRC register after the 3 bytes Identification/flags with only unknown bit j set. */
    private static final int[] A = new int[UNKNOWNS];
    /** Row i: the register bits whose parity is unknown bit i (valid when the register lies in A's range). */
    private static final int[] SOLVE = new int[UNKNOWNS];
    /** {@code Z^-(2^i)} as 32 columns each. */
    private static final int[][] UNSHIFT = new int[MAX_POWER][];

    static {
        for (int i = 0; i < 256; i++) {
            int c = i;
            for (int b = 0; b < 8; b++) {
                c = (c & 1) != 0 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
            }
            TABLE[i] = c;
        }
        for (int j = 0; j < UNKNOWNS; j++) {
            int id = 1 << j;
            A[j] = raw(id >>> 8, id & 0xFF, 0);
        }
        int[] zero = new int[32];
        for (int j = 0; j < 32; j++) {
            zero[j] = zeroByte(1 << j);
        }
        UNSHIFT[0] = invert(zero);
        for (int i = 1; i < MAX_POWER; i++) {
            UNSHIFT[i] = multiply(UNSHIFT[i - 1], UNSHIFT[i - 1]);
        }
        eliminate();
    }

    private final Icrc icrc = new Icrc();
    private final Ipv4Header ip = new Ipv4Header();
    private final UdpHeader udp = new UdpHeader();
    private final MemorySegment pseudo = Arena.ofAuto().allocate(Ipv4Header.LENGTH + UdpHeader.LENGTH, 8);

    /** Creates a solver with its own scratch space. */
    public Ipv4IcrcSolver() {
    }

    /**
     * Solves the ICRC of BTH-onward bytes that arrived in a UDP datagram over IPv4 for the hidden
     * Identification (header without options, DF set, not fragmented).
     *
     * @param source          the sender's address, network order as an int (10.0.0.1 = 0x0A000001)
     * @param destination     the address it was sent to
     * @param sourcePort      the UDP source port
     * @param destinationPort the UDP destination port
     * @param bthOnward       holds the BTH through the ICRC
     * @param offset          where the BTH starts
     * @param bthLength       bytes from the BTH through the ICRC (the UDP payload length)
     * @return the Identification (0..65535); {@link #NONE} if no Identification reproduces the ICRC
     *     (the packet is corrupt or forged) or it is malformed
     */
    public int solve(int source, int destination, int sourcePort, int destinationPort, MemorySegment bthOnward,
                     long offset, int bthLength) {
        if (bthLength < Bth.LENGTH + Icrc.LENGTH || offset < 0 || offset > bthOnward.byteSize() - bthLength) {
            return NONE;
        }
        int udpLength = UdpHeader.LENGTH + bthLength;
        ip.wrap(pseudo, 0).writeUdp(0, Ipv4Header.LENGTH + udpLength, 0, true, 0, source, destination);
        udp.wrap(pseudo, Ipv4Header.LENGTH).write(sourcePort, destinationPort, udpLength, 0);
        int withZeros = icrc.compute(pseudo, 0, bthOnward, offset, bthLength);
        int received = Icrc.read(bthOnward, offset + bthLength - Icrc.LENGTH);
        return solveDifference(received ^ withZeros, coveredBytes(bthLength) - BYTES_THROUGH_FLAGS);
    }

    /** {@link #solve} answered with a yes or no. */
    public boolean verify(int source, int destination, int sourcePort, int destinationPort, MemorySegment bthOnward,
                          long offset, int bthLength) {
        return solve(source, destination, sourcePort, destinationPort, bthOnward, offset, bthLength) != NONE;
    }

    /**
     * Solves a whole IPv4 packet (header without options, as captured) for its Identification,
     * ignoring the value its header holds there (and rebuilding lengths, protocol and flags as a
     * receiver would).
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IPv4 header starts
     * @param packetLength bytes from the header through the ICRC
     * @return as {@link #solve}
     */
    public int solvePacket(MemorySegment packet, long ipOffset, int packetLength) {
        int headers = Ipv4Header.LENGTH + UdpHeader.LENGTH;
        if (packetLength < headers + Bth.LENGTH + Icrc.LENGTH || ipOffset < 0
                || ipOffset > packet.byteSize() - packetLength
                || (packet.get(BYTE, ipOffset) & 0xFF) != (Ipv4Header.VERSION << 4 | 5)) {
            return NONE;
        }
        Ipv4Header h = ip.wrap(packet, ipOffset);
        UdpHeader u = udp.wrap(packet, ipOffset + Ipv4Header.LENGTH);
        return solve(h.sourceAddress(), h.destinationAddress(), u.sourcePort(), u.destinationPort(), packet,
                ipOffset + headers, packetLength - headers);
    }

    /** Bytes the ICRC covers for {@code bthLength} bytes from the BTH through the ICRC. */
    private static int coveredBytes(int bthLength) {
        return 8 + Ipv4Header.LENGTH + UdpHeader.LENGTH + bthLength - Icrc.LENGTH;
    }

    /**
     * The core: {@code difference} is the received ICRC xor the ICRC computed with Identification and
     * flags zero; {@code tail} the covered bytes after the flags byte.
     */
    static int solveDifference(int difference, int tail) {
        if (tail < 0 || tail >= 1 << MAX_POWER) {
            return NONE;
        }
        int v = difference;
        for (int i = 0; tail != 0; i++, tail >>>= 1) {
            if ((tail & 1) != 0) {
                v = apply(UNSHIFT[i], v);
            }
        }
        int u = 0;
        for (int i = 0; i < UNKNOWNS; i++) {
            u |= (Integer.bitCount(SOLVE[i] & v) & 1) << i;
        }
        return apply(A, u) == v ? u : NONE;
    }

    // ------------------------------------------------------------------ GF(2) helpers (class init)

    /** The CRC register (no init, no final xor) after {@code bytes} from zero: linear in the bytes. */
    private static int raw(int... bytes) {
        int s = 0;
        for (int b : bytes) {
            s = TABLE[(s ^ b) & 0xFF] ^ (s >>> 8);
        }
        return s;
    }

    private static int zeroByte(int s) {
        return TABLE[s & 0xFF] ^ (s >>> 8);
    }

    /** {@code m * v} for a matrix given as columns. */
    private static int apply(int[] columns, int v) {
        int r = 0;
        for (int j = 0; v != 0; j++, v >>>= 1) {
            if ((v & 1) != 0) {
                r ^= columns[j];
            }
        }
        return r;
    }

    private static int[] multiply(int[] left, int[] right) {
        int[] m = new int[32];
        for (int j = 0; j < 32; j++) {
            m[j] = apply(left, right[j]);
        }
        return m;
    }

    /** Inverse of a 32x32 matrix given as columns, by Gauss-Jordan on its rows. */
    private static int[] invert(int[] columns) {
        int[] rows = new int[32];
        int[] inverseRows = new int[32];
        for (int r = 0; r < 32; r++) {
            for (int j = 0; j < 32; j++) {
                rows[r] |= (columns[j] >>> r & 1) << j;
            }
            inverseRows[r] = 1 << r;
        }
        for (int c = 0; c < 32; c++) {
            int p = c;
            while ((rows[p] >>> c & 1) == 0) {
                p++; // a CRC's zero-byte step is invertible: a pivot exists
            }
            swap(rows, c, p);
            swap(inverseRows, c, p);
            for (int r = 0; r < 32; r++) {
                if (r != c && (rows[r] >>> c & 1) != 0) {
                    rows[r] ^= rows[c];
                    inverseRows[r] ^= inverseRows[c];
                }
            }
        }
        int[] inverse = new int[32];
        for (int r = 0; r < 32; r++) {
            for (int j = 0; j < 32; j++) {
                inverse[j] |= (inverseRows[r] >>> j & 1) << r;
            }
        }
        return inverse;
    }

    /**
     * Fills {@link #SOLVE}: each of A's 32 rows is a 16-bit vector; reduce them (tracking which
     * register bits were combined) until unknown i is alone in a row; that row's combination is SOLVE[i].
     */
    private static void eliminate() {
        int[] rows = new int[32];
        int[] combos = new int[32];
        for (int r = 0; r < 32; r++) {
            for (int j = 0; j < UNKNOWNS; j++) {
                rows[r] |= (A[j] >>> r & 1) << j;
            }
            combos[r] = 1 << r;
        }
        for (int c = 0; c < UNKNOWNS; c++) {
            int p = c;
            while (p < 32 && (rows[p] >>> c & 1) == 0) {
                p++;
            }
            if (p == 32) {
                throw new AssertionError("the Identification bits are not independent in the CRC");
            }
            swap(rows, c, p);
            swap(combos, c, p);
            for (int r = 0; r < 32; r++) {
                if (r != c && (rows[r] >>> c & 1) != 0) {
                    rows[r] ^= rows[c];
                    combos[r] ^= combos[c];
                }
            }
        }
        System.arraycopy(combos, 0, SOLVE, 0, UNKNOWNS);
    }

    private static void swap(int[] a, int i, int j) {
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.packet;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.verbs.Gid;

/**
 * One RoCEv2 packet from the BTH on: {@link #buffer} holds the BTH and extension headers at offset 0
 * ({@link #headerLength} bytes); the payload is either a gather list of slices of registered memory
 * (zero copy, as the in-process fabric passes it) or, once {@link #materialize() materialized}, the
 * bytes right after the headers in {@link #buffer}, followed by the ICRC. Packets are pooled and
 * reused; whoever holds one owns it and must {@link #release()} it. Not thread safe.
 */
public final class Packet {
    /** Room for the BTH and the longest extension header chain. */
    public static final int MAX_HEADER = 64;
    /** The largest payload: path MTU 4096. */
    public static final int MAX_PAYLOAD = 4096;
    /** Header, payload, pad and ICRC. */
    public static final int BUFFER_SIZE = MAX_HEADER + MAX_PAYLOAD + 8;
    private static final int MAX_PIECES = 64;

    public final MemorySegment buffer;
    public int headerLength;
    public int payloadLength;
    /** The payload as slices: segment, offset, length per piece. */
    private final MemorySegment[] pieceSegment = new MemorySegment[MAX_PIECES];
    private final long[] pieceOffset = new long[MAX_PIECES];
    private final int[] pieceLength = new int[MAX_PIECES];
    private int pieces;
    /** Source and destination addresses (the IP addresses of the RoCEv2 packet, as GIDs). */
    public Gid srcGid;
    public Gid dstGid;
    /** UDP source port (RoCEv2 entropy), informational. */
    public int srcPort;
    /**
     * True when the 4 bytes after the materialized payload hold an ICRC the receiver must verify (set
     * by links that can corrupt packets; the perfect in-process fabric carries none).
     */
    public boolean hasIcrc;
    /**
     * The IP header fields the sender's address vector chose (hop limit/TTL, traffic class/TOS, IPv6 flow
     * label), carried so the receiver can show the packet's real network header in a UD GRH area. Over
     * UDP they are what the socket set and received (see UdpLink).
     */
    public int hopLimit = DEFAULT_HOP_LIMIT;
    public int trafficClass;
    public int flowLabel;
    /**
     * How many packets of one message this hand-off stands for. 1 on every real link; more only on the
     * in-process fabric ({@link DirectLink}), where an RC requester hands a run of WRITE packets over at
     * once: the BTH is the first packet's (its PSN, opcode and RETH), the payload is the run's, every
     * packet but the last is {@link #burstMtu} bytes long, and {@link #burstLastOpcode} is the last
     * packet's opcode. The receiver checks it as the packets it stands for (or splits it into them).
     */
    public int burstPackets = 1;
    /** The path MTU the burst was segmented at. */
    public int burstMtu;
    /** The opcode of the burst's last packet. */
    public int burstLastOpcode;
    /**
     * Run once when the packet is released, then cleared: a link whose received packet points into
     * memory it must not reuse before the engine is done (a shared-memory ring's burst entry) learns
     * when it may. Null for every other packet.
     */
    public Runnable onRelease;
    /** The hop limit of a packet whose sender did not choose one (the usual kernel default). */
    public static final int DEFAULT_HOP_LIMIT = 64;
    private final PacketPool pool;
    private boolean free;

    Packet(PacketPool pool) {
        this.pool = pool;
        this.buffer = Arena.ofAuto().allocate(BUFFER_SIZE, 8);
    }

    /** Clears for reuse. */
    public Packet reset() {
        headerLength = 0;
        payloadLength = 0;
        for (int i = 0; i < pieces; i++) {
            pieceSegment[i] = null;
        }
        pieces = 0;
        srcGid = null;
        dstGid = null;
        srcPort = 0;
        hasIcrc = false;
        hopLimit = DEFAULT_HOP_LIMIT;
        trafficClass = 0;
        flowLabel = 0;
        burstPackets = 1;
        return this;
    }

    /** Appends a payload slice; false if the packet cannot take more pieces. */
    public boolean addPiece(MemorySegment segment, long offset, int length) {
        if (length == 0) {
            return true;
        }
        if (pieces == MAX_PIECES) {
            return false;
        }
        pieceSegment[pieces] = segment;
        pieceOffset[pieces] = offset;
        pieceLength[pieces] = length;
        pieces++;
        payloadLength += length;
        return true;
    }

    /** Declares that the payload is already in {@link #buffer} after the headers. */
    public void setFlatPayload(int length) {
        for (int i = 0; i < pieces; i++) {
            pieceSegment[i] = null;
        }
        pieces = 0;
        payloadLength = 0;
        addPiece(buffer, headerLength, length);
    }

    public int pieces() {
        return pieces;
    }

    public MemorySegment pieceSegment(int i) {
        return pieceSegment[i];
    }

    public long pieceOffset(int i) {
        return pieceOffset[i];
    }

    public int pieceLength(int i) {
        return pieceLength[i];
    }

    /**
     * Appends payload bytes {@code [from, from + length)} of {@code src} as slices of the same memory
     * (splitting a burst into its packets); false if this packet cannot take more pieces.
     */
    public boolean addPayloadOf(Packet src, int from, int length) {
        int skip = from;
        int left = length;
        for (int i = 0; i < src.pieces && left > 0; i++) {
            int len = src.pieceLength[i];
            if (skip >= len) {
                skip -= len;
                continue;
            }
            int n = Math.min(len - skip, left);
            if (!addPiece(src.pieceSegment[i], src.pieceOffset[i] + skip, n)) {
                return false;
            }
            left -= n;
            skip = 0;
        }
        return left == 0;
    }

    /** False if a payload slice lies in memory freed since it was added (its arena closed). */
    public boolean payloadAlive() {
        for (int i = 0; i < pieces; i++) {
            if (!pieceSegment[i].scope().isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** True if the payload lies in {@link #buffer} right after the headers. */
    public boolean isFlat() {
        return pieces == 0 || (pieces == 1 && pieceSegment[0] == buffer && pieceOffset[0] == headerLength);
    }

    /** Copies the payload into {@link #buffer} after the headers (so it no longer refers to registered memory). */
    public void materialize() {
        if (isFlat()) {
            return;
        }
        long at = headerLength;
        for (int i = 0; i < pieces; i++) {
            MemorySegment.copy(pieceSegment[i], pieceOffset[i], buffer, at, pieceLength[i]);
            at += pieceLength[i];
        }
        setFlatPayload(payloadLength);
    }

    /**
     * Copies {@code length} payload bytes starting at payload offset {@code from} into {@code dst} at
     * {@code dstOffset}.
     */
    public void copyPayload(int from, MemorySegment dst, long dstOffset, int length) {
        int skip = from;
        int left = length;
        long at = dstOffset;
        for (int i = 0; i < pieces && left > 0; i++) {
            int len = pieceLength[i];
            if (skip >= len) {
                skip -= len;
                continue;
            }
            int n = Math.min(len - skip, left);
            copyBytes(pieceSegment[i], pieceOffset[i] + skip, dst, at, n);
            at += n;
            left -= n;
            skip = 0;
        }
    }

    /** Up to this many bytes are copied with a few loads and stores rather than the bulk copy. */
    static final int SMALL_COPY = 16;

    /**
     * {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)} for any length, with
     * payloads of up to {@value #SMALL_COPY} bytes (an 8-byte WRITE, a small SEND) moved by a few
     * unaligned loads and stores: the bulk copy's per-call checks cost more than such a payload. All
     * loads come before the stores, so overlapping ranges behave as with the bulk copy.
     */
    public static void copyBytes(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, int n) {
        if (n > SMALL_COPY) {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, n);
        } else if (n >= 8) {
            long first = src.get(ValueLayout.JAVA_LONG_UNALIGNED, srcOffset);
            long last = src.get(ValueLayout.JAVA_LONG_UNALIGNED, srcOffset + n - 8);
            dst.set(ValueLayout.JAVA_LONG_UNALIGNED, dstOffset, first);
            dst.set(ValueLayout.JAVA_LONG_UNALIGNED, dstOffset + n - 8, last);
        } else if (n >= 4) {
            int first = src.get(ValueLayout.JAVA_INT_UNALIGNED, srcOffset);
            int last = src.get(ValueLayout.JAVA_INT_UNALIGNED, srcOffset + n - 4);
            dst.set(ValueLayout.JAVA_INT_UNALIGNED, dstOffset, first);
            dst.set(ValueLayout.JAVA_INT_UNALIGNED, dstOffset + n - 4, last);
        } else if (n > 0) {
            byte first = src.get(ValueLayout.JAVA_BYTE, srcOffset);
            byte mid = src.get(ValueLayout.JAVA_BYTE, srcOffset + n / 2);
            byte last = src.get(ValueLayout.JAVA_BYTE, srcOffset + n - 1);
            dst.set(ValueLayout.JAVA_BYTE, dstOffset, first);
            dst.set(ValueLayout.JAVA_BYTE, dstOffset + n / 2, mid);
            dst.set(ValueLayout.JAVA_BYTE, dstOffset + n - 1, last);
        } else if (n < 0) {
            throw new IndexOutOfBoundsException("negative length " + n);
        }
    }

    /** A deep copy (headers and materialized payload) from {@code into}'s pool, for duplication. */
    public Packet copyTo(Packet into) {
        into.reset();
        MemorySegment.copy(buffer, 0, into.buffer, 0, headerLength);
        into.headerLength = headerLength;
        copyPayload(0, into.buffer, headerLength, payloadLength);
        into.setFlatPayload(payloadLength);
        into.srcGid = srcGid;
        into.dstGid = dstGid;
        into.srcPort = srcPort;
        into.hopLimit = hopLimit;
        into.trafficClass = trafficClass;
        into.flowLabel = flowLabel;
        return into;
    }

    /** Returns the packet to its pool. */
    public void release() {
        Runnable r = onRelease;
        if (r != null) {
            onRelease = null;
            r.run();
        }
        if (pool != null) {
            pool.release(this);
        }
    }

    boolean markFree(boolean f) {
        boolean was = free;
        free = f;
        return was;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The transmit half of one iWARP connection after MPA (what siw's {@code siw_qp_tx.c} does per QP): turns
 * one RDMAP message at a time into FPDUs and streams their bytes into whatever output window the caller
 * offers, byte-exact, so a non-blocking socket that takes only part of a buffer loses nothing.
 *
 * <p>Segmentation as siw's {@code siw_prepare_fpdu}: each FPDU carries at most
 * {@link FpduEncoder#maxPayload} bytes for its header, so that header, payload and CRC fill one TCP
 * segment of the MSS; only the last FPDU of a message has L set and needs a pad. Sends go on untagged
 * queue 0 and Read Requests on queue 1, each queue numbering its messages from MSN 1 (siw starts its
 * transmit counters at 0 and increments before use); the message offset, or the tagged offset of a
 * Write or Read Response, advances by each FPDU's payload. A Terminate (queue 2, MSN 1 as siw sends it)
 * goes out at the next FPDU boundary and ends the stream.
 *
 * <p>The payload is read from the caller's slices (gather) straight into the output, and the CRC is
 * computed over the bytes written, so nothing is allocated per FPDU. The slices must stay unchanged
 * until the message is {@linkplain #idle() written}. Not thread safe; one sender per connection.
 */
public final class RdmapSender {
    private static final int NONE = 0;
    private static final int HEADER = 1;
    private static final int PAYLOAD = 2;
    private static final int TRAILER = 3;
    private static final int HEADER_CAPACITY = Terminate.HEADER_LENGTH + Rdmap.READ_REQUEST_HEADER_LENGTH;
    private static final MemorySegment[] NO_SLICES = new MemorySegment[0];

    private final boolean crcEnabled;
    private final int maxTaggedPayload;
    private final int maxUntaggedPayload;
    private final ReadLedger reads;
    private final Crc32c crc = new Crc32c();
    private final MemorySegment header;
    private final MemorySegment trailer;
    private final int[] lastMsn = new int[3];

    private int opcode = -1;
    private MemorySegment[] gather = NO_SLICES;
    private int gatherCount;
    private long messageLength;
    private long processed;
    private int sliceIndex;
    private long sliceOffset;
    private int stag;
    private long baseOffset;
    private int msn;
    private int invalidateStag;

    private int phase = NONE;
    private boolean fpduLast;
    private int headerLength;
    private int headerSent;
    private int payloadLength;
    private int payloadSent;
    private int trailerLength;
    private int trailerSent;
    private boolean terminateFpdu;
    private TerminateCause pendingTerminate;
    private boolean terminated;

    private ByteBuffer lastBuffer;
    private MemorySegment lastBufferSegment;

    /**
     * Creates a sender.
     *
     * @param crcEnabled whether CRC was negotiated in MPA
     * @param mss        the TCP maximum segment size each FPDU is cut to
     * @param reads      the connection's Read bookkeeping, shared with its receiver
     */
    public RdmapSender(boolean crcEnabled, int mss, ReadLedger reads) {
        this.crcEnabled = crcEnabled;
        this.maxTaggedPayload = FpduEncoder.maxPayload(mss, Ddp.TAGGED_HEADER_LENGTH);
        this.maxUntaggedPayload = FpduEncoder.maxPayload(mss, Ddp.UNTAGGED_HEADER_LENGTH);
        this.reads = Objects.requireNonNull(reads, "reads");
        Arena arena = Arena.ofAuto();
        this.header = arena.allocate(HEADER_CAPACITY);
        this.trailer = arena.allocate(8);
    }

    /** {@return whether no message is in progress: the last one is wholly written to the output} */
    public boolean idle() {
        return opcode < 0 && phase == NONE;
    }

    /** {@return whether a Terminate has been written: the sender writes nothing more} */
    public boolean terminated() {
        return terminated;
    }

    /** {@return whether bytes wait to be written: a message or a Terminate} */
    public boolean pending() {
        return !terminated && (!idle() || pendingTerminate != null);
    }

    /** {@return the most payload an FPDU of a tagged message carries} */
    public int maxTaggedPayload() {
        return maxTaggedPayload;
    }

    /** {@return the most payload an FPDU of a Send carries} */
    public int maxUntaggedPayload() {
        return maxUntaggedPayload;
    }

    /**
     * Starts a Send.
     *
     * @param sendOpcode     {@link Rdmap#SEND}, {@link Rdmap#SEND_SOLICITED}, {@link Rdmap#SEND_INVALIDATE}
     *                       or {@link Rdmap#SEND_SOLICITED_INVALIDATE}
     * @param invalidate     the STag the peer is to invalidate (the two Invalidate opcodes), else ignored
     * @param slices         the payload, gathered in order
     * @param count          how many slices are used
     * @return the MSN the Send carries
     * @throws IllegalStateException if a message is in progress or the stream is terminated
     */
    public int send(int sendOpcode, int invalidate, MemorySegment[] slices, int count) {
        if (!Rdmap.send(sendOpcode)) {
            throw new IllegalArgumentException(Rdmap.name(sendOpcode) + " is not a Send");
        }
        start(sendOpcode, slices, count);
        invalidateStag = Rdmap.invalidates(sendOpcode) ? invalidate : 0;
        msn = ++lastMsn[Ddp.QUEUE_SEND];
        return msn;
    }

    /**
     * Starts an RDMA Write.
     *
     * @param sinkStag   the peer's STag
     * @param sinkOffset the tagged offset of the first byte
     * @param slices     the payload, gathered in order
     * @param count      how many slices are used
     */
    public void write(int sinkStag, long sinkOffset, MemorySegment[] slices, int count) {
        start(Rdmap.RDMA_WRITE, slices, count);
        stag = sinkStag;
        baseOffset = sinkOffset;
    }

    /**
     * Starts an RDMA Read Request and records it in the {@link ReadLedger} first, so that its response
     * finds it however fast it comes back.
     *
     * @param sinkStag     this side's STag the response is placed into
     * @param sinkOffset   its tagged offset
     * @param size         the bytes to read
     * @param sourceStag   the peer's STag to read from
     * @param sourceOffset its tagged offset
     * @param token        the caller's name for the read, handed back when its response is complete
     * @return the MSN the request carries, or -1 when ORD requests are in flight (nothing started)
     */
    public int readRequest(int sinkStag, long sinkOffset, int size, int sourceStag, long sourceOffset, long token) {
        checkStartable();
        if (!reads.addOutbound(sinkStag, sinkOffset, size, token)) {
            return -1;
        }
        start(Rdmap.RDMA_READ_REQUEST, NO_SLICES, 0);
        msn = ++lastMsn[Ddp.QUEUE_READ_REQUEST];
        Rdmap.readRequestBody(header, 0, sinkStag, sinkOffset, size, sourceStag, sourceOffset);
        return msn;
    }

    /**
     * Starts the Read Response to an inbound Read Request whose source the caller has resolved.
     *
     * @param sinkStag   the requester's sink STag
     * @param sinkOffset its tagged offset
     * @param slices     the source bytes, as many as the request's size
     * @param count      how many slices are used
     */
    public void readResponse(int sinkStag, long sinkOffset, MemorySegment[] slices, int count) {
        start(Rdmap.RDMA_READ_RESPONSE, slices, count);
        stag = sinkStag;
        baseOffset = sinkOffset;
    }

    /**
     * Answers an inbound Read Request: resolves its source for REMOTE_READ, checks the bounds and starts
     * the Read Response; when the source is refused, queues the Terminate siw sends (RDMAP remote
     * protection, the refusal's code, the request rebuilt as the copied header) instead.
     *
     * @param request  the request as {@link RdmapReceiver.Host#readRequested} reported it
     * @param resolver the device's STag table
     * @param window   a window to resolve into
     * @return null when the response is started, else the refusal
     */
    public StagError answer(RdmapReceiver.ReadRequest request, StagResolver resolver, StagResolver.Window window) {
        long size = Integer.toUnsignedLong(request.size());
        StagError error = null;
        long at = 0;
        if (size > 0) {
            error = resolver.resolve(request.sourceStag(), StagResolver.Use.REMOTE_READ, window);
            if (error == null && (at = window.offsetOf(request.sourceOffset(), size)) < 0) {
                error = StagError.BASE_BOUNDS;
            }
        }
        if (error != null) {
            terminate(new TerminateCause().readSourceRefused(error, request.msn(), request.sinkStag(),
                    request.sinkOffset(), request.size(), request.sourceStag(), request.sourceOffset()));
            return error;
        }
        MemorySegment[] one = size == 0 ? NO_SLICES : new MemorySegment[] {window.segment().asSlice(at, size)};
        readResponse(request.sinkStag(), request.sinkOffset(), one, one.length);
        return null;
    }

    /**
     * Queues a Terminate: it is written at the next FPDU boundary (the message in progress is abandoned),
     * and nothing is written after it. A second call keeps the first cause.
     *
     * @param cause the error to report
     */
    public void terminate(TerminateCause cause) {
        if (pendingTerminate == null && !terminated && cause.present()) {
            pendingTerminate = cause;
        }
    }

    /**
     * Writes the next bytes of the stream into {@code out}'s remaining space and advances its position.
     * The buffer's full extent is viewed once and kept while the same buffer comes back.
     *
     * @param out the output, e.g. a buffer that is then flipped and written to a SocketChannel
     * @return the bytes written, 0 when nothing is pending or there is no room
     */
    public int fill(ByteBuffer out) {
        if (out != lastBuffer) {
            lastBuffer = out;
            lastBufferSegment = MemorySegment.ofBuffer(out.duplicate().clear());
        }
        int n = (int) fill(lastBufferSegment, out.position(), out.remaining());
        out.position(out.position() + n);
        return n;
    }

    /**
     * Writes the next bytes of the stream into {@code [offset, offset + length)} of {@code out}. Stops at
     * the end of the current message (start the next one and call again to batch) or of the window.
     *
     * @param out    the output segment
     * @param offset where to start writing
     * @param length the room there
     * @return the bytes written
     */
    public long fill(MemorySegment out, long offset, long length) {
        Objects.checkFromIndexSize(offset, length, out.byteSize());
        long at = offset;
        long end = offset + length;
        while (at < end && !terminated) {
            if (phase == NONE && !nextFpdu()) {
                break;
            }
            int n;
            switch (phase) {
                case HEADER -> {
                    n = (int) Math.min(headerLength - headerSent, end - at);
                    MemorySegment.copy(header, headerSent, out, at, n);
                    updateCrc(out, at, n);
                    headerSent += n;
                    if (headerSent == headerLength) {
                        if (payloadLength > 0) {
                            phase = PAYLOAD;
                        } else {
                            startTrailer();
                        }
                    }
                }
                case PAYLOAD -> {
                    n = (int) Math.min(payloadLength - payloadSent, end - at);
                    gatherInto(out, at, n);
                    updateCrc(out, at, n);
                    payloadSent += n;
                    if (payloadSent == payloadLength) {
                        startTrailer();
                    }
                }
                default -> {
                    n = (int) Math.min(trailerLength - trailerSent, end - at);
                    MemorySegment.copy(trailer, 8 - trailerLength + trailerSent, out, at, n);
                    trailerSent += n;
                    if (trailerSent == trailerLength) {
                        endFpdu();
                    }
                }
            }
            at += n;
        }
        return at - offset;
    }

    private void checkStartable() {
        if (!idle() || terminated || pendingTerminate != null) {
            throw new IllegalStateException(terminated || pendingTerminate != null
                    ? "the stream is terminated: no more messages"
                    : Rdmap.name(opcode) + " is still being written: one message at a time");
        }
    }

    private void start(int op, MemorySegment[] slices, int count) {
        checkStartable();
        Objects.checkFromIndexSize(0, count, slices.length);
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += slices[i].byteSize();
        }
        if (total > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("a message of " + total + " bytes: at most 2^32 - 1");
        }
        opcode = op;
        gather = slices;
        gatherCount = count;
        messageLength = total;
        processed = 0;
        sliceIndex = 0;
        sliceOffset = 0;
        stag = 0;
        baseOffset = 0;
        invalidateStag = 0;
    }

    /** Prepares the next FPDU's header; false when there is nothing to write. */
    private boolean nextFpdu() {
        crc.reset();
        if (pendingTerminate != null) {
            MemorySegment copy = pendingTerminate.copiedHeader();
            Terminate.header(header, 0, 1, pendingTerminate.controlWord());
            MemorySegment.copy(copy, 0, header, Terminate.COPIED_HEADER_OFFSET, copy.byteSize());
            beginFpdu(Terminate.HEADER_LENGTH + (int) copy.byteSize(), 0, true);
            terminateFpdu = true;
            return true;
        }
        if (opcode < 0) {
            return false;
        }
        terminateFpdu = false;
        if (opcode == Rdmap.RDMA_READ_REQUEST) {
            Ddp.control(header, 0, Rdmap.control(opcode, true));
            Ddp.untaggedHeader(header, 0, 0, Ddp.QUEUE_READ_REQUEST, msn, 0);
            beginFpdu(Rdmap.READ_REQUEST_HEADER_LENGTH, 0, true);
            return true;
        }
        boolean tagged = Rdmap.tagged(opcode);
        long remaining = messageLength - processed;
        int max = tagged ? maxTaggedPayload : maxUntaggedPayload;
        boolean last = remaining <= max;
        int n = (int) Math.min(remaining, max);
        Ddp.control(header, 0, Rdmap.control(opcode, last));
        if (tagged) {
            Ddp.taggedHeader(header, 0, stag, baseOffset + processed);
        } else {
            Ddp.untaggedHeader(header, 0, invalidateStag, Ddp.QUEUE_SEND, msn, (int) processed);
        }
        beginFpdu(tagged ? Ddp.TAGGED_HEADER_LENGTH : Ddp.UNTAGGED_HEADER_LENGTH, n, last);
        return true;
    }

    private void beginFpdu(int hl, int payload, boolean last) {
        Ddp.ulpduLength(header, 0, hl + payload - Ddp.ULPDU_LENGTH_SIZE);
        headerLength = hl;
        headerSent = 0;
        payloadLength = payload;
        payloadSent = 0;
        fpduLast = last;
        phase = HEADER;
    }

    private void startTrailer() {
        int pad = -(headerLength + payloadLength) & 3;
        trailer.fill((byte) 0);
        if (crcEnabled) {
            if (pad > 0) {
                crc.update(trailer, 0, pad);
            }
            Crc32c.writeWire(trailer, 4, crc.value());
        }
        trailerLength = pad + FpduEncoder.CRC_SIZE;
        trailerSent = 0;
        phase = TRAILER;
    }

    private void endFpdu() {
        phase = NONE;
        if (terminateFpdu) {
            terminated = true;
            pendingTerminate = null;
            opcode = -1;
            return;
        }
        processed += payloadLength;
        if (fpduLast) {
            if (opcode == Rdmap.RDMA_READ_RESPONSE) {
                reads.answerInbound();
            }
            opcode = -1;
            gather = NO_SLICES;
        }
    }

    private void gatherInto(MemorySegment out, long at, int length) {
        int left = length;
        long to = at;
        while (left > 0) {
            MemorySegment s = gather[sliceIndex];
            long avail = s.byteSize() - sliceOffset;
            if (avail == 0) {
                sliceIndex++;
                sliceOffset = 0;
                continue;
            }
            int n = (int) Math.min(avail, left);
            MemorySegment.copy(s, sliceOffset, out, to, n);
            sliceOffset += n;
            to += n;
            left -= n;
        }
    }

    private void updateCrc(MemorySegment out, long at, int n) {
        if (crcEnabled) {
            crc.update(out, at, n);
        }
    }
}

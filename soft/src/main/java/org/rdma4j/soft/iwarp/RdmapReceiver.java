// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The receive half of one iWARP connection after MPA (what siw's {@code siw_qp_rx.c} does per QP): takes
 * the TCP byte stream in chunks of any size, finds the FPDUs with an {@link FpduReassembler}, checks each
 * as siw does and places its payload: tagged segments straight into the memory the device resolves for
 * the STag, Sends into the posted receive's slices. It reports each finished message to the
 * {@link Host}.
 *
 * <p>Checks (siw's {@code siw_get_hdr}, {@code siw_send_check_ntoh}, {@code siw_write_check_ntoh},
 * {@code siw_rresp_check_ntoh}, {@code siw_init_rresp}, {@code siw_check_mem}), each with the Terminate
 * siw sends:
 * <ul>
 *   <li>framing, versions, opcode, CRC: see {@link FpduError};</li>
 *   <li>a message of the tagged (Write, Read Response) or the untagged kind (Send, Read Request) that
 *       starts before the previous one of its kind has its last segment ("packet intersection" in siw):
 *       RDMAP remote operation, unexpected opcode;</li>
 *   <li>Send: a receive posted (else DDP untagged "no buffer"), queue 0 (else "invalid QN"), the
 *       expected MSN (else "MSN out of range"), the message offset where the message stands (else
 *       "invalid MO"), room left in the receive (else "no buffer", as siw reports it);</li>
 *   <li>Read Request: queue 1, the expected MSN of queue 1, no payload and L set (else DDP local
 *       catastrophic), fewer than IRD unanswered (else RDMAP remote operation, catastrophic for the
 *       stream, as siw when its IRQ is full);</li>
 *   <li>Write: each later segment names the same STag (else DDP tagged "invalid STag") at the next
 *       tagged offset (else "base or bounds"); the STag resolves for REMOTE_WRITE (else the
 *       {@link StagError}'s tagged code) and the segment lies inside its window (else "base or
 *       bounds"). A zero-length segment is not checked, as siw (the MPA v2 ready-to-receive Write);</li>
 *   <li>Read Response: an outbound Read Request waits (else DDP local catastrophic); each segment names
 *       its sink STag (else "invalid STag") at the next offset, within its size and ending exactly at
 *       it (else "base or bounds"); the sink resolves for LOCAL_WRITE;</li>
 *   <li>Send with Invalidate: the STag is invalidated when the Send completes (else RDMAP "STag cannot
 *       be invalidated", remote protection when it belongs to another PD, remote operation otherwise).</li>
 * </ul>
 * The first error stops the receiver for good: {@link #terminateToSend()} holds the Terminate, no byte is
 * placed after it, and the connection is to be closed, as siw drops it. A Terminate from the peer is
 * reported and stops the receiver too; it is never answered.
 *
 * <p>Allocation-free per FPDU (a Read Request is reported as a small record). Not thread safe; one
 * receiver per connection, driven by its receiving thread.
 */
public final class RdmapReceiver {
    /** An inbound RDMA Read Request, as the responder needs it to answer. */
    public record ReadRequest(int msn, int sinkStag, long sinkOffset, int size, int sourceStag, long sourceOffset) {
    }

    /** What the QP engine provides: receive buffers, and the completions it turns into work completions. */
    public interface Host {
        /**
         * Hands over the next posted receive for a new Send.
         *
         * @param into to fill with its checked slices
         * @return false when no receive is posted
         */
        boolean nextReceive(ReceiveBuffer into);

        /**
         * A Send is wholly placed.
         *
         * @param receive         the receive it went into
         * @param lengthBytes     its length
         * @param opcode          which Send: {@link Rdmap#solicited} and {@link Rdmap#invalidates} tell SE and
         *                        invalidation
         * @param invalidatedStag the STag invalidated for the Invalidate opcodes, else 0
         */
        void sendReceived(ReceiveBuffer receive, long lengthBytes, int opcode, int invalidatedStag);

        /**
         * An RDMA Read Request is accepted (counted against IRD); answer it, e.g. with
         * {@link RdmapSender#answer}.
         *
         * @param request the request
         */
        void readRequested(ReadRequest request);

        /**
         * The oldest outbound Read Request has its whole response placed.
         *
         * @param token       the name the caller gave it in {@link RdmapSender#readRequest}
         * @param lengthBytes its size
         */
        void readCompleted(long token, long lengthBytes);

        /**
         * The peer sent a Terminate; the connection is over.
         *
         * @param layer      its layer
         * @param etype      its error type
         * @param ecode      its error code
         * @param wellFormed whether it came on queue 2 with the expected MSN and message offset 0
         */
        void terminateReceived(int layer, int etype, int ecode, boolean wellFormed);
    }

    private final FpduReassembler reassembler;
    private final ReadLedger reads;
    private final StagResolver resolver;
    private final Host host;
    private final StagResolver.Window window = new StagResolver.Window();
    private final ReceiveBuffer receive = new ReceiveBuffer();
    private final TerminateCause cause = new TerminateCause();
    private final int[] expectedMsn = {1, 1, 1};
    private boolean stopped;
    private boolean peerTerminated;
    private int cutOpcode = -1;

    private boolean untaggedMore;
    private int untaggedOpcode;
    private long sendPlaced;
    private int sendSlice;
    private long sendSliceOffset;
    private int invalidateStag;

    private boolean taggedMore;
    private int taggedOpcode;
    private int writeStag;
    private long writeNextOffset;
    private long readPlaced;

    /**
     * Creates a receiver.
     *
     * @param crcEnabled     whether CRC was negotiated in MPA
     * @param maxUlpduLength the largest ULPDU accepted (65535 accepts any)
     * @param reads          the connection's Read bookkeeping, shared with its sender
     * @param resolver       the device's STag table
     * @param host           the QP engine
     */
    public RdmapReceiver(boolean crcEnabled, int maxUlpduLength, ReadLedger reads, StagResolver resolver, Host host) {
        this.reads = Objects.requireNonNull(reads, "reads");
        this.resolver = Objects.requireNonNull(resolver, "resolver");
        this.host = Objects.requireNonNull(host, "host");
        this.reassembler = new FpduReassembler(maxUlpduLength, crcEnabled, this::onFpdu);
    }

    /**
     * Takes the next bytes from TCP.
     *
     * @param chunk  the segment holding them
     * @param offset the first byte
     * @param length how many
     * @return true while the connection is healthy; false once the receiver has stopped (see
     *         {@link #terminateToSend()} and {@link #peerTerminated()})
     */
    public boolean receive(MemorySegment chunk, long offset, long length) {
        if (stopped) {
            return false;
        }
        FpduError e = reassembler.receive(chunk, offset, length);
        if (e != FpduError.NONE && !stopped) {
            MemorySegment h = reassembler.failedHeader();
            if (e == FpduError.CRC_MISMATCH && h.byteSize() >= Ddp.CONTROL_OFFSET + 2) {
                cutOpcode = Ddp.opcode(Ddp.control(h, 0));
            }
            fail(e.layer(), e.etype(), e.ecode(), h, 0, (int) h.byteSize(), e.words());
        }
        return !stopped;
    }

    /** {@return whether the receiver has stopped: an error found, or a Terminate received} */
    public boolean stopped() {
        return stopped;
    }

    /**
     * {@return the opcode of the inbound message the error cut, whose work request (the receive taken for
     * a Send, the Read whose response it was) completes in error as siw's {@code siw_rdmap_complete}
     * completes it; -1 when the error belongs to no message (framing, versions, an unknown opcode)}
     * For a message that starts inside an unfinished one of its kind, the unfinished one is cut.
     */
    public int cutOpcode() {
        return cutOpcode;
    }

    /** {@return whether the peer sent a Terminate} */
    public boolean peerTerminated() {
        return peerTerminated;
    }

    /** {@return the Terminate to send the peer, or null (no error, or the peer terminated)} */
    public TerminateCause terminateToSend() {
        return cause.present() ? cause : null;
    }

    /** {@return whether a message is partly received: a close now cuts it} */
    public boolean midMessage() {
        return untaggedMore || taggedMore || reassembler.midFpdu();
    }

    /**
     * {@return the MSN the next message of an untagged queue must carry}
     *
     * @param queue 0, 1 or 2
     */
    public int expectedMsn(int queue) {
        return expectedMsn[queue];
    }

    private void onFpdu(Fpdu f) {
        if (stopped) {
            return;
        }
        int op = f.opcode();
        if (op == Rdmap.TERMINATE) {
            terminate(f);
            return;
        }
        boolean tagged = f.tagged();
        boolean more = tagged ? taggedMore : untaggedMore;
        int previous = tagged ? taggedOpcode : untaggedOpcode;
        if (more && op != previous) {
            cutOpcode = previous;
            failRdmap(f, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_OPCODE,
                    Rdmap.name(op) + " starts inside an unfinished " + Rdmap.name(previous));
            return;
        }
        switch (op) {
            case Rdmap.RDMA_WRITE -> write(f, !more);
            case Rdmap.RDMA_READ_RESPONSE -> readResponse(f, !more);
            case Rdmap.RDMA_READ_REQUEST -> readRequest(f);
            default -> send(f, !more);
        }
        if (!stopped) {
            if (tagged) {
                taggedMore = !f.last();
                taggedOpcode = op;
            } else {
                untaggedMore = !f.last();
                untaggedOpcode = op;
            }
        }
    }

    private void send(Fpdu f, boolean first) {
        if (first) {
            if (!host.nextReceive(receive)) {
                failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_NO_BUFFER, "a Send arrived with no receive posted");
                return;
            }
            sendPlaced = 0;
            sendSlice = 0;
            sendSliceOffset = 0;
            invalidateStag = f.invalidateStag();
        }
        int length = f.payloadLength();
        if (f.queueNumber() != Ddp.QUEUE_SEND) {
            failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_INVALID_QN, "a Send on a queue other than 0");
        } else if (f.msn() != expectedMsn[Ddp.QUEUE_SEND]) {
            failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_MSN_RANGE, "a Send with an unexpected MSN");
        } else if (Integer.toUnsignedLong(f.messageOffset()) != sendPlaced) {
            failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_INVALID_MO, "a Send segment at the wrong message offset");
        } else if (sendPlaced + length > receive.totalBytes()) {
            failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_NO_BUFFER, "a Send longer than its receive buffer");
        } else {
            scatter(f.segment(), f.payloadOffset(), length);
            sendPlaced += length;
            if (f.last()) {
                sendComplete(f);
            }
        }
    }

    private void sendComplete(Fpdu f) {
        int op = f.opcode();
        expectedMsn[Ddp.QUEUE_SEND]++;
        if (Rdmap.invalidates(op)) {
            StagError e = resolver.invalidate(invalidateStag);
            if (e != null) {
                failRdmap(f, e == StagError.NOT_ASSOCIATED ? Terminate.RDMAP_REMOTE_PROTECTION
                        : Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_CANNOT_INVALIDATE,
                        "a Send with Invalidate names an STag that cannot be invalidated: " + e);
                return;
            }
        }
        host.sendReceived(receive, sendPlaced, op, Rdmap.invalidates(op) ? invalidateStag : 0);
    }

    private void scatter(MemorySegment src, long from, int length) {
        long at = from;
        int left = length;
        while (left > 0) {
            MemorySegment s = receive.slice(sendSlice);
            long room = s.byteSize() - sendSliceOffset;
            if (room == 0) {
                sendSlice++;
                sendSliceOffset = 0;
                continue;
            }
            int n = (int) Math.min(room, left);
            MemorySegment.copy(src, at, s, sendSliceOffset, n);
            sendSliceOffset += n;
            at += n;
            left -= n;
        }
    }

    private void readRequest(Fpdu f) {
        if (f.queueNumber() != Ddp.QUEUE_READ_REQUEST) {
            failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_INVALID_QN, "a Read Request on a queue other than 1");
        } else if (f.msn() != expectedMsn[Ddp.QUEUE_READ_REQUEST]) {
            failDdp(f, Terminate.DDP_UNTAGGED, Terminate.DDP_U_MSN_RANGE, "a Read Request with an unexpected MSN");
        } else if (f.payloadLength() != 0 || !f.last()) {
            failDdp(f, Terminate.DDP_CATASTROPHIC, 0, "a Read Request with payload or without L");
        } else if (!reads.acceptInbound()) {
            failRdmap(f, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_CATASTROPHIC_STREAM,
                    "a Read Request beyond IRD " + reads.ird());
        } else {
            MemorySegment s = f.segment();
            long o = f.offset();
            expectedMsn[Ddp.QUEUE_READ_REQUEST]++;
            host.readRequested(new ReadRequest(f.msn(), Rdmap.readSinkStag(s, o), Rdmap.readSinkOffset(s, o),
                    Rdmap.readSize(s, o), Rdmap.readSourceStag(s, o), Rdmap.readSourceOffset(s, o)));
        }
    }

    private void write(Fpdu f, boolean first) {
        int length = f.payloadLength();
        if (length == 0) {
            return;
        }
        int stag = f.stag();
        long to = f.taggedOffset();
        if (!first && stag != writeStag) {
            failDdp(f, Terminate.DDP_TAGGED, Terminate.DDP_T_INVALID_STAG, "a Write segment names another STag");
        } else if (!first && to != writeNextOffset) {
            failDdp(f, Terminate.DDP_TAGGED, Terminate.DDP_T_BASE_BOUNDS, "a Write segment at the wrong tagged offset");
        } else if (place(f, stag, to, length, StagResolver.Use.REMOTE_WRITE, "an RDMA Write")) {
            writeStag = stag;
            writeNextOffset = to + length;
        }
    }

    private void readResponse(Fpdu f, boolean first) {
        if (!reads.hasOutbound()) {
            failDdp(f, Terminate.DDP_CATASTROPHIC, 0, "a Read Response with no Read Request outstanding");
            return;
        }
        if (first) {
            readPlaced = 0;
        }
        int length = f.payloadLength();
        long size = reads.oldestSize();
        if (f.stag() != reads.oldestSinkStag()) {
            failDdp(f, Terminate.DDP_TAGGED, Terminate.DDP_T_INVALID_STAG, "a Read Response to another sink STag");
        } else if (f.taggedOffset() != reads.oldestSinkOffset() + readPlaced || readPlaced + length > size
                || f.last() && readPlaced + length != size) {
            failDdp(f, Terminate.DDP_TAGGED, Terminate.DDP_T_BASE_BOUNDS,
                    "a Read Response segment outside the requested range");
        } else if (length == 0 || place(f, f.stag(), f.taggedOffset(), length, StagResolver.Use.LOCAL_WRITE,
                "a Read Response")) {
            readPlaced += length;
            if (f.last()) {
                long token = reads.oldestToken();
                reads.retireOutbound();
                host.readCompleted(token, size);
            }
        }
    }

    /** Resolves the STag, checks the bounds and copies the payload; false after recording an error. */
    private boolean place(Fpdu f, int stag, long to, int length, StagResolver.Use use, String what) {
        StagError e = resolver.resolve(stag, use, window);
        long at = e == null ? window.offsetOf(to, length) : -1;
        if (e == null && at < 0) {
            e = StagError.BASE_BOUNDS;
        }
        if (e != null) {
            failDdp(f, Terminate.DDP_TAGGED, e.ddpTaggedCode(), what + " refused by its STag: " + e);
            return false;
        }
        MemorySegment.copy(f.segment(), f.payloadOffset(), window.segment(), at, length);
        return true;
    }

    private void terminate(Fpdu f) {
        boolean wellFormed = f.queueNumber() == Ddp.QUEUE_TERMINATE && f.msn() == expectedMsn[Ddp.QUEUE_TERMINATE]
                && f.messageOffset() == 0;
        int word = Terminate.controlWord(f.segment(), f.offset());
        stopped = true;
        peerTerminated = true;
        host.terminateReceived(Terminate.layer(word), Terminate.etype(word), Terminate.ecode(word), wellFormed);
    }

    private void failDdp(Fpdu f, int etype, int ecode, String why) {
        cut(f);
        fail(Terminate.LAYER_DDP, etype, ecode, f.segment(), f.offset(), headerBytes(f), why);
    }

    private void failRdmap(Fpdu f, int etype, int ecode, String why) {
        cut(f);
        fail(Terminate.LAYER_RDMAP, etype, ecode, f.segment(), f.offset(), headerBytes(f), why);
    }

    private void cut(Fpdu f) {
        if (cutOpcode < 0) {
            cutOpcode = f.opcode();
        }
    }

    private static int headerBytes(Fpdu f) {
        return Math.min(f.headerLength(), Rdmap.READ_REQUEST_HEADER_LENGTH);
    }

    private void fail(int layer, int etype, int ecode, MemorySegment s, long at, int available, String why) {
        cause.set(layer, etype, ecode, s, at, available, why);
        stopped = true;
    }
}

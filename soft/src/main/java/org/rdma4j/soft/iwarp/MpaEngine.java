// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.rdma4j.verbs.Errno;

/**
 * What both MPA roles share: a bounded inbox the socket is read into, an outbox the socket is written
 * from, the deadline, and the outcome. The engine never touches a socket; whoever drives it (a selector
 * agent, {@link MpaSocketDriver}, a test) moves bytes:
 *
 * {@snippet :
 * engine.advance(clock.nanoTime());              // starts the timer, queues the first frame
 * while (!engine.idle()) {
 *     channel.write(engine.outbox());            // whatever is queued
 *     if (engine.wantsRead() && channel.read(engine.inbox()) < 0) {
 *         engine.peerClosed();
 *     }
 *     engine.advance(clock.nanoTime());          // decode, decide, time out
 *     // wait for the channel, at most until engine.deadlineNs()
 * }
 * }
 *
 * <p>The inbox holds at most {@link #INBOX_CAPACITY} bytes, however long a peer says its frame is, and
 * is read from only while a frame is awaited; bytes read beyond the frame are handed on in
 * {@link MpaConnection#carryOver()}. Allocation happens on this control path only (frames, results).
 * Not thread safe: one thread drives an engine.
 */
public abstract sealed class MpaEngine permits MpaInitiator, MpaResponder {
    /** The most bytes the inbox holds: the longest MPA frame, the longest RTR and room for a fast peer's FPDUs. */
    public static final int INBOX_CAPACITY = 1024;
    private static final int OUTBOX_CAPACITY = MpaFrame.HEADER_LENGTH + MpaFrame.MAX_PRIVATE_DATA + 64;

    final MpaConfig config;
    final String peer;
    final MpaFrame frame = new MpaFrame();
    private final ByteBuffer inbox = ByteBuffer.allocate(INBOX_CAPACITY);
    private final ByteBuffer outbox = ByteBuffer.allocate(OUTBOX_CAPACITY).flip();
    private boolean peerClosed;
    private boolean started;
    private long deadlineNs = Long.MAX_VALUE;
    private MpaFailure failure;
    private MpaConnection connection;

    MpaEngine(MpaConfig config, String peer) {
        this.config = Objects.requireNonNull(config, "config");
        this.peer = peer == null ? "an unnamed peer" : peer;
    }

    /** {@return the buffer to read socket bytes into (between position and limit); read only if {@link #wantsRead()}} */
    public final ByteBuffer inbox() {
        return inbox;
    }

    /**
     * Copies bytes into the inbox, as a socket read would.
     *
     * @param src the bytes, from position to limit; the position moves past those taken
     * @return how many were taken: all, or as many as the inbox had room for
     */
    public final int feed(ByteBuffer src) {
        int n = Math.min(src.remaining(), inbox.remaining());
        inbox.put(inbox.position(), src, src.position(), n);
        inbox.position(inbox.position() + n);
        src.position(src.position() + n);
        return n;
    }

    /** {@return the bytes to write to the socket, from position to limit} */
    public final ByteBuffer outbox() {
        return outbox;
    }

    /** Tells the engine the peer closed its sending side: no more bytes will come. */
    public final void peerClosed() {
        peerClosed = true;
    }

    /**
     * Tells the engine the socket failed (reset, broken pipe): the setup ends as if the peer closed.
     *
     * @param e the failure
     */
    public final void socketFailed(IOException e) {
        peerClosed = true;
        outbox.position(outbox.limit());
        if (!idle()) {
            fail(MpaFailure.of(closedEvent(), Errno.ECONNRESET,
                    step() + ": the connection with " + peer + " failed (" + e.getClass().getSimpleName() + ")"));
        }
    }

    /**
     * Moves the setup on: starts the timer on the first call, decodes what has arrived, decides, queues
     * frames, and fails the setup once the deadline has passed.
     *
     * @param nowNs the current time, same clock as all calls
     */
    public final void advance(long nowNs) {
        if (idle()) {
            return;
        }
        if (!started) {
            started = true;
            start(nowNs);
        }
        progress(nowNs);
        if (!idle() && nowNs - deadlineNs >= 0) {
            fail(timeout());
        }
    }

    /** {@return whether the engine waits for bytes from the peer (the driver should read into {@link #inbox()})} */
    public abstract boolean wantsRead();

    /**
     * {@return whether the engine has nothing to do until the program acts: established, failed or
     * rejected with every queued byte written, or (responder) waiting for accept or reject}
     */
    public abstract boolean idle();

    /** {@return when the current wait ends, {@link Long#MAX_VALUE} when nothing is awaited} */
    public final long deadlineNs() {
        return deadlineNs;
    }

    /** {@return the failure, or null} */
    public final MpaFailure failure() {
        return failure;
    }

    /** {@return the established connection, or null} */
    public final MpaConnection connection() {
        return connection;
    }

    /** {@return the peer's address as given} */
    public final String peer() {
        return peer;
    }

    abstract void start(long nowNs);

    abstract void progress(long nowNs);

    abstract MpaFailure timeout();

    abstract MpaFailure.CmEvent closedEvent();

    abstract String step();

    final void deadline(long nowNs, long timeoutNs) {
        deadlineNs = nowNs + timeoutNs;
    }

    final void noDeadline() {
        deadlineNs = Long.MAX_VALUE;
    }

    final boolean peerHasClosed() {
        return peerClosed;
    }

    final boolean outboxEmpty() {
        return !outbox.hasRemaining();
    }

    final boolean failed() {
        return failure != null;
    }

    final void fail(MpaFailure f) {
        if (failure == null && connection == null) {
            failure = f;
            noDeadline();
        }
    }

    final void established(MpaConnection c) {
        connection = c;
        noDeadline();
    }

    /** Decodes the frame at the start of the inbox. */
    final MpaStatus decode(boolean expectReply) {
        MemorySegment s = MemorySegment.ofArray(inbox.array());
        return frame.decode(s, 0, inbox.position(), expectReply, peerClosed);
    }

    /** {@return how many bytes the inbox holds} */
    final int held() {
        return inbox.position();
    }

    /** {@return the inbox bytes as a segment, valid until the next read} */
    final MemorySegment held(int from, int length) {
        return MemorySegment.ofArray(inbox.array()).asSlice(from, length);
    }

    /** Drops the first {@code n} bytes of the inbox (a consumed frame); the rest move to the front. */
    final void consume(int n) {
        inbox.flip().position(n);
        inbox.compact();
    }

    /** {@return a copy of the bytes held, for {@link MpaConnection#carryOver()}} */
    final ByteBuffer carryOver() {
        ByteBuffer out = ByteBuffer.allocate(inbox.position());
        out.put(0, inbox, 0, inbox.position());
        return out;
    }

    /** {@return a copy of {@code length} bytes of the inbox at {@code from}} */
    final byte[] copy(long from, int length) {
        byte[] out = new byte[length];
        System.arraycopy(inbox.array(), (int) from, out, 0, length);
        return out;
    }

    /**
     * Queues an MPA frame.
     *
     * @param reply true for a reply or reject
     * @param flags the flags byte
     * @param revision 1 or 2
     * @param irdWord the IRD word of an enhanced frame
     * @param ordWord the ORD word of an enhanced frame
     * @param privateData the ULP's private data
     */
    final void queueFrame(boolean reply, int flags, int revision, int irdWord, int ordWord, byte[] privateData) {
        outbox.compact();
        MpaFrame.encode(outbox, reply, flags, revision, irdWord, ordWord, privateData);
        outbox.flip();
    }

    /** Queues an RTR FPDU or the Read Response to one. */
    final void queueFpdu(FpduWriter writer) {
        outbox.compact();
        MemorySegment s = MemorySegment.ofBuffer(outbox);
        int n = writer.write(s);
        outbox.position(outbox.position() + n);
        outbox.flip();
    }

    /** Writes one FPDU at the start of a segment and says its length. */
    @FunctionalInterface
    interface FpduWriter {
        int write(MemorySegment s);
    }
}

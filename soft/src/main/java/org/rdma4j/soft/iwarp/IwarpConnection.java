// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * One iWARP connection as a queue pair uses it: work requests in, completions out, over a TCP connection
 * an {@link IwarpAgent} moves. Sends and Writes complete when their last byte is handed to TCP, Reads
 * when their last Read Response is placed, receives when their Send's last FPDU is placed (siw's
 * {@code siw_qp_sq_process}, {@code siw_rdmap_complete}). ORD bounds the Reads in flight; the rest wait
 * in the send queue, and so does everything posted behind them.
 *
 * <p>The connection ends in error on a Terminate sent or received, the peer's close or a socket error,
 * or {@link #close()}. Then, as siw's {@code siw_rdmap_complete}, {@code siw_sq_flush} and
 * {@code siw_rq_flush}: the inbound message the error cut completes its work request with siw's status
 * (a receive too short: LOC_LEN_ERR; a Send with Invalidate whose STag cannot be invalidated:
 * REM_INV_REQ_ERR; a Read whose sink is refused locally: LOC_PROT_ERR; anything else: GENERAL_ERR), and
 * every other work request not completed is flushed (WR_FLUSH_ERR), each queue in post order, including
 * those posted later. A peer's Terminate cuts nothing: siw flushes everything then.
 *
 * <p>Thread safe: any thread posts; the agent thread runs the protocol. Posting allocates nothing.
 */
public final class IwarpConnection implements AutoCloseable {
    /** Where the connection stands. */
    public enum State {
        /** The TCP connection is being made (active side). */
        CONNECTING,
        /** MPA setup runs. */
        MPA,
        /** The peer's MPA request waits for {@link #accept} or {@link #reject} (passive side). */
        AWAITING_DECISION,
        /** Established: work requests move. */
        RTS,
        /** Ended; every work request is completed and later ones are flushed. */
        ERROR
    }

    final IwarpAgent agent;
    final String peer;
    final CompletableFuture<MpaConnection> established = new CompletableFuture<>();
    final CompletableFuture<String> ended = new CompletableFuture<>();
    final MpaEngine engine;
    volatile State state;
    IwarpQp qp;
    SendWorkQueue sq;
    RecvWorkQueue rq;
    Decision decision;
    volatile boolean abortRequested;

    /** The program's answer to an MPA request, carried to the agent thread. */
    record Decision(boolean accept, int ird, int ord, byte[] privateData) {
    }

    IwarpConnection(IwarpAgent agent, String peer, MpaEngine engine, IwarpQp qp, State initial) {
        this.agent = agent;
        this.peer = peer;
        this.engine = engine;
        this.state = initial;
        if (qp != null) {
            bind(qp);
        }
    }

    private void bind(IwarpQp q) {
        qp = q;
        sq = new SendWorkQueue(q.sendDepth());
        rq = new RecvWorkQueue(q.recvDepth());
    }

    /** {@return where the connection stands} */
    public State state() {
        return state;
    }

    /** {@return the peer's address, for messages} */
    public String peer() {
        return peer;
    }

    /** {@return completes with what MPA agreed, or exceptionally with the setup's failure as a VerbsException} */
    public CompletableFuture<MpaConnection> established() {
        return established;
    }

    /** {@return completes with the reason, in words, when the connection has ended} */
    public CompletableFuture<String> ended() {
        return ended;
    }

    /**
     * {@return why MPA setup failed (with a peer's reject and its private data), or null; read it once
     * {@link #established()} has completed exceptionally}
     */
    public MpaFailure setupFailure() {
        return established.isCompletedExceptionally() ? engine.failure() : null;
    }

    /** {@return the peer's MPA request (passive side, once it arrived), else null} */
    public MpaRequest request() {
        return engine instanceof MpaResponder r ? r.request() : null;
    }

    /**
     * Accepts the peer's request, as {@code rdma_accept}: binds the queue pair and sends the MPA reply.
     *
     * @param queuePair   the queue pair the connection serves
     * @param ird         RDMA Reads this side serves at once
     * @param ord         RDMA Reads this side issues at once
     * @param privateData the reply's private data
     * @throws IllegalStateException if no request awaits a decision
     * @throws VerbsException EINVAL for too much private data or IRD/ORD over the device's
     */
    public void accept(IwarpQp queuePair, int ird, int ord, byte[] privateData) {
        Objects.requireNonNull(queuePair, "queuePair");
        MpaRequest req = checkDeciding("accept");
        int max = MpaFrame.maxUlpPrivateData(req.enhanced());
        MpaConfig c = engine.config;
        if (privateData.length > max || ird < 0 || ord < 0 || ird > c.maxIrd() || ord > c.maxOrd()) {
            throw new VerbsException(Errno.EINVAL, "accept of " + peer + ": " + privateData.length
                    + " bytes of private data (at most " + max + "), IRD " + ird + " and ORD " + ord
                    + " (at most " + c.maxIrd() + " and " + c.maxOrd() + ")");
        }
        synchronized (this) {
            bind(queuePair);
            decision = new Decision(true, ird, ord, privateData.clone());
        }
        agent.wake(this);
    }

    /**
     * Rejects the peer's request, as {@code rdma_reject}: sends an MPA reject and closes.
     *
     * @param privateData the reject's private data
     * @throws IllegalStateException if no request awaits a decision
     */
    public void reject(byte[] privateData) {
        MpaRequest req = checkDeciding("reject");
        if (privateData.length > MpaFrame.maxUlpPrivateData(req.enhanced())) {
            throw new VerbsException(Errno.EINVAL, "reject of " + peer + ": " + privateData.length
                    + " bytes of private data");
        }
        synchronized (this) {
            decision = new Decision(false, 0, 0, privateData.clone());
        }
        agent.wake(this);
    }

    private synchronized MpaRequest checkDeciding(String what) {
        MpaRequest req = request();
        if (state != State.AWAITING_DECISION || decision != null || req == null) {
            throw new IllegalStateException(what + " of " + peer + ": no MPA request awaits a decision (" + state + ")");
        }
        return req;
    }

    /**
     * Posts a Send.
     *
     * @param wrId       the work request id
     * @param opcode     {@link Rdmap#SEND}, {@link Rdmap#SEND_SOLICITED}, {@link Rdmap#SEND_INVALIDATE} or
     *                   {@link Rdmap#SEND_SOLICITED_INVALIDATE}
     * @param invalidate the peer's STag to invalidate (Invalidate opcodes)
     * @param slices     the payload, checked by the device; unchanged until the completion
     */
    public void postSend(long wrId, int opcode, int invalidate, MemorySegment[] slices) {
        if (!Rdmap.send(opcode)) {
            throw new IllegalArgumentException(Rdmap.name(opcode) + " is not a Send");
        }
        post(wrId, opcode, slices, Rdmap.invalidates(opcode) ? invalidate : 0, 0, 0, 0, total(slices));
    }

    /**
     * Posts an RDMA Write.
     *
     * @param wrId         the work request id
     * @param remoteStag   the peer's STag
     * @param remoteOffset the tagged offset of the first byte there
     * @param slices       the payload, checked by the device; unchanged until the completion
     */
    public void postWrite(long wrId, int remoteStag, long remoteOffset, MemorySegment[] slices) {
        post(wrId, Rdmap.RDMA_WRITE, slices, remoteStag, remoteOffset, 0, 0, total(slices));
    }

    /**
     * Posts an RDMA Read into one local sink, as siw's one Read SGE: the response is placed through the
     * {@link StagResolver} for LOCAL_WRITE of {@code localStag}, checked when it arrives.
     *
     * @param wrId         the work request id
     * @param localStag    the sink's STag (lkey), carried as the Read Request's sink STag
     * @param localOffset  the sink's tagged offset
     * @param length       the bytes to read
     * @param remoteStag   the peer's source STag
     * @param remoteOffset the source's tagged offset
     */
    public void postRead(long wrId, int localStag, long localOffset, int length, int remoteStag, long remoteOffset) {
        post(wrId, SendWorkQueue.READ, null, remoteStag, remoteOffset, localStag, localOffset,
                Integer.toUnsignedLong(length));
    }

    /**
     * Posts a receive.
     *
     * @param wrId   the work request id
     * @param slices the scatter list, checked by the device (LOCAL_WRITE); unchanged until the completion
     */
    public void postRecv(long wrId, MemorySegment[] slices) {
        Objects.requireNonNull(slices, "slices");
        boolean flushNow;
        synchronized (this) {
            checkBound();
            if (rq.full()) {
                throw new VerbsException(Errno.ENOMEM, "post_recv to " + peer + ": " + rq.capacity
                        + " receives posted and not completed");
            }
            int i = rq.slot(rq.tail);
            rq.wrId[i] = wrId;
            rq.slices[i] = slices;
            rq.tail++;
            flushNow = state == State.ERROR;
            if (flushNow) {
                flushAll();
            }
        }
        if (!flushNow) {
            agent.wake(this);
        }
    }

    private void post(long wrId, int opcode, MemorySegment[] slices, int stag, long offset, int localStag,
                      long localOffset, long length) {
        if (length > 0xFFFF_FFFFL) {
            throw new VerbsException(Errno.EINVAL, "post_send to " + peer + ": " + length + " bytes, at most 2^32 - 1");
        }
        boolean flushNow;
        synchronized (this) {
            checkBound();
            if (sq.full()) {
                throw new VerbsException(Errno.ENOMEM, "post_send to " + peer + ": " + sq.capacity
                        + " work requests posted and not completed");
            }
            int i = sq.claim();
            sq.wrId[i] = wrId;
            sq.opcode[i] = opcode;
            sq.slices[i] = slices;
            sq.remoteStag[i] = stag;
            sq.remoteOffset[i] = offset;
            sq.localStag[i] = localStag;
            sq.localOffset[i] = localOffset;
            sq.length[i] = length;
            sq.publish();
            flushNow = state == State.ERROR;
            if (flushNow) {
                flushAll();
            }
        }
        if (!flushNow) {
            agent.wake(this);
        }
    }

    private void checkBound() {
        if (qp == null) {
            throw new IllegalStateException("the connection with " + peer + " has no queue pair before accept");
        }
    }

    private static long total(MemorySegment[] slices) {
        long n = 0;
        for (MemorySegment s : slices) {
            n += s.byteSize();
        }
        return n;
    }

    /**
     * Ends the connection, as moving the QP to ERROR does in siw: everything not completed is flushed and
     * the TCP connection is dropped, no Terminate. Returns at once; the agent does the rest.
     */
    @Override
    public void close() {
        abortRequested = true;
        agent.wake(this);
    }

    // ---- agent side (called with or without the lock as noted) ----

    static WcOpcode wcOpcode(int opcode) {
        return opcode == Rdmap.RDMA_WRITE ? WcOpcode.RDMA_WRITE
                : opcode == SendWorkQueue.READ ? WcOpcode.RDMA_READ : WcOpcode.SEND;
    }

    /** Completes a send queue slot (lock held). */
    void completeSend(int slot, WcStatus status) {
        sq.state[slot] = SendWorkQueue.DONE;
        long bytes = status == WcStatus.SUCCESS ? sq.length[slot] : 0;
        qp.completions().sendCompleted(sq.wrId[slot], status, wcOpcode(sq.opcode[slot]), bytes);
    }

    /** Completes the oldest receive (lock held). */
    void completeRecv(WcStatus status, long bytes, int invalidated, boolean solicited) {
        int i = rq.slot(rq.head);
        long id = rq.wrId[i];
        rq.slices[i] = null;
        rq.head++;
        if (rq.taken < rq.head) {
            rq.taken = rq.head;
        }
        qp.completions().recvCompleted(id, status, bytes, invalidated, solicited);
    }

    /** Flushes every work request not completed, each queue in post order (lock held). */
    void flushAll() {
        if (qp == null) {
            return;
        }
        for (long seq = sq.head; seq < sq.tail; seq++) {
            int i = sq.slot(seq);
            if (sq.state[i] != SendWorkQueue.DONE) {
                completeSend(i, WcStatus.WR_FLUSH_ERR);
            }
        }
        sq.next = sq.tail;
        sq.retire();
        while (rq.head < rq.tail) {
            completeRecv(WcStatus.WR_FLUSH_ERR, 0, 0, false);
        }
    }

    /** Ends the connection: flushes, reports, fails the setup if it was still running (agent thread). */
    void end(String why, VerbsException setupFailure) {
        synchronized (this) {
            state = State.ERROR;
            flushAll();
        }
        if (!established.isDone()) {
            established.completeExceptionally(setupFailure != null ? setupFailure
                    : new VerbsException(Errno.ECONNRESET, why));
        }
        ended.complete(why);
    }

    @Override
    public String toString() {
        return "iWARP connection with " + peer + " (" + state + ")";
    }
}

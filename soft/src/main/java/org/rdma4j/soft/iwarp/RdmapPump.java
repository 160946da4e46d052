// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.WcStatus;

/**
 * The established phase of one {@link IwarpConnection} on its agent's thread: reads the socket into the
 * {@link RdmapReceiver}, starts the sender's messages (inbound Read Requests first, as siw serves its
 * IRQ first; then the send queue in order, a Read waiting while ORD Reads are out) and writes its FPDUs
 * as the socket takes them, completing a Send or Write once its last byte is handed to TCP.
 *
 * <p>When the receiver stops on an error, the message it cut completes its work request in error, the
 * Terminate is queued behind the FPDU in progress and written within {@link #TERMINATE_DRAIN_NS} (best
 * effort, as siw), everything else is flushed, and the connection closes. A peer's Terminate, close or
 * socket error ends the connection at once. Allocation-free per FPDU. Agent thread only.
 */
final class RdmapPump implements RdmapReceiver.Host, StagResolver {
    /** How long a Terminate may take to leave before the connection closes without it. */
    static final long TERMINATE_DRAIN_NS = TimeUnit.SECONDS.toNanos(2);
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final int READS_PER_STEP = 16;
    private static final int WRITES_PER_STEP = 64;

    private final IwarpConnection conn;
    private final SocketChannel channel;
    private final MpaConnection mpa;
    private final ReadLedger ledger;
    private final RdmapSender sender;
    private final RdmapReceiver receiver;
    private final StagResolver.Window window = new StagResolver.Window();
    private final ArrayDeque<RdmapReceiver.ReadRequest> inboundReads = new ArrayDeque<>();
    private final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private final MemorySegment inSegment = MemorySegment.ofBuffer(in);
    private final ByteBuffer out = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private long filledBytes;
    private long writtenBytes;
    private long fillingSeq = -1;
    private long transmitScan;
    private boolean localSinkRefused;
    private boolean wantWrite;
    private boolean draining;
    private boolean flushed;
    private long drainDeadlineNs = Long.MAX_VALUE;
    private long nowNs;
    private String endReason;
    private String peerTerminate;

    RdmapPump(IwarpConnection conn, SocketChannel channel, MpaConnection mpa) {
        this.conn = conn;
        this.channel = channel;
        this.mpa = mpa;
        this.ledger = new ReadLedger(mpa.ird(), mpa.ord());
        this.sender = new RdmapSender(mpa.crc(), conn.qp.mssBytes(), ledger);
        this.receiver = new RdmapReceiver(mpa.crc(), 65535, ledger, this, this);
    }

    /** Feeds the bytes that arrived with the last MPA frame, before anything read later. */
    void start() {
        ByteBuffer carried = mpa.carryOver();
        if (carried.hasRemaining()) {
            receiver.receive(MemorySegment.ofBuffer(carried), 0, carried.remaining());
        }
    }

    /** {@return why the connection ended, once {@link #step} said so} */
    String endReason() {
        return endReason;
    }

    long deadlineNs() {
        return drainDeadlineNs;
    }

    int interestOps() {
        return (draining ? 0 : SelectionKey.OP_READ) | (wantWrite ? SelectionKey.OP_WRITE : 0);
    }

    /**
     * Moves the connection on.
     *
     * @param now the agent's clock
     * @return false when the connection is over (see {@link #endReason()})
     */
    boolean step(long now) {
        nowNs = now;
        try {
            if (!draining) {
                readSome();
                if (endReason != null) {
                    return false;
                }
                if (receiver.stopped()) {
                    receiverStopped();
                    if (endReason != null && !draining) {
                        return false;
                    }
                }
            }
            writeSome();
        } catch (IOException e) {
            endReason = "the TCP connection with " + conn.peer + " failed (" + e.getClass().getSimpleName() + ")";
            return false;
        }
        if (endReason != null && !draining) {
            return false;
        }
        if (draining) {
            boolean late = now - drainDeadlineNs >= 0;
            if (!flushed && (sender.terminated() || late)) {
                flushed = true;
                synchronized (conn) {
                    conn.flushAll();
                }
            }
            return !(late || sender.terminated() && out.position() == 0);
        }
        return true;
    }

    private void readSome() throws IOException {
        for (int i = 0; i < READS_PER_STEP; i++) {
            in.clear();
            int n = channel.read(in);
            if (n < 0) {
                endReason = conn.peer + " closed the TCP connection";
                return;
            }
            if (n == 0 || !receiver.receive(inSegment, 0, n)) {
                return;
            }
        }
    }

    private void receiverStopped() {
        if (receiver.peerTerminated()) {
            endReason = conn.peer + " sent a Terminate (" + peerTerminate + ")";
            return;
        }
        TerminateCause cause = receiver.terminateToSend();
        cutInFlight(cause);
        sender.terminate(cause);
        drain("a Terminate was sent to " + conn.peer + ": " + cause.words());
    }

    private void drain(String why) {
        endReason = why;
        draining = true;
        drainDeadlineNs = nowNs + TERMINATE_DRAIN_NS;
    }

    /** Completes the work request of the message the receiver's error cut, with siw's status. */
    private void cutInFlight(TerminateCause cause) {
        int cut = receiver.cutOpcode();
        synchronized (conn) {
            if (cut >= 0 && Rdmap.send(cut) && conn.rq.inProgress()) {
                WcStatus status = WcStatus.GENERAL_ERR;
                if (cause.layer() == Terminate.LAYER_DDP && cause.etype() == Terminate.DDP_UNTAGGED
                        && cause.ecode() == Terminate.DDP_U_NO_BUFFER) {
                    status = WcStatus.LOC_LEN_ERR;
                } else if (cause.layer() == Terminate.LAYER_RDMAP && cause.ecode() == Terminate.RDMAP_CANNOT_INVALIDATE) {
                    status = WcStatus.REM_INV_REQ_ERR;
                }
                conn.completeRecv(status, 0, 0, false);
            } else if (cut == Rdmap.RDMA_READ_RESPONSE && ledger.hasOutbound()) {
                long token = ledger.oldestToken();
                ledger.retireOutbound();
                conn.completeSend(conn.sq.slot(token), localSinkRefused ? WcStatus.LOC_PROT_ERR : WcStatus.GENERAL_ERR);
                conn.sq.retire();
            }
        }
    }

    private void writeSome() throws IOException {
        for (int round = 0; round < WRITES_PER_STEP; round++) {
            boolean more = true;
            while (out.hasRemaining()) {
                if (!sender.pending() && !startNext()) {
                    more = false;
                    break;
                }
                int n = sender.fill(out);
                filledBytes += n;
                noteFilled();
                if (n == 0) {
                    break;
                }
            }
            if (out.position() == 0) {
                wantWrite = false;
                return;
            }
            out.flip();
            int w = channel.write(out);
            out.compact();
            writtenBytes += w;
            if (w > 0) {
                completeTransmitted();
            }
            if (out.position() > 0) {
                wantWrite = true;
                return;
            }
            if (!more) {
                wantWrite = false;
                return;
            }
        }
        wantWrite = true;
    }

    /** Starts the next message: an inbound Read's response first, then the send queue; false if none. */
    private boolean startNext() {
        if (draining || sender.terminated() || !sender.idle()) {
            return false;
        }
        RdmapReceiver.ReadRequest request = inboundReads.poll();
        if (request != null) {
            StagError refused = sender.answer(request, this, window);
            if (refused != null) {
                drain("the source of " + conn.peer + "'s RDMA Read was refused (" + refused + "); a Terminate was sent");
            }
            return true;
        }
        synchronized (conn) {
            SendWorkQueue sq = conn.sq;
            if (sq.next >= sq.tail) {
                return false;
            }
            long seq = sq.next;
            int i = sq.slot(seq);
            int op = sq.opcode[i];
            if (op == SendWorkQueue.READ) {
                if (ledger.ord() == 0) {
                    conn.completeSend(i, WcStatus.LOC_QP_OP_ERR);
                    sq.next++;
                    endReason = "an RDMA Read was posted to " + conn.peer + " with an ORD of 0";
                    return false;
                }
                if (sender.readRequest(sq.localStag[i], sq.localOffset[i], (int) sq.length[i], sq.remoteStag[i],
                        sq.remoteOffset[i], seq) < 0) {
                    return false;
                }
                sq.state[i] = SendWorkQueue.READ_OUT;
            } else {
                MemorySegment[] slices = sq.slices[i];
                if (op == Rdmap.RDMA_WRITE) {
                    sender.write(sq.remoteStag[i], sq.remoteOffset[i], slices, slices.length);
                } else {
                    sender.send(op, sq.remoteStag[i], slices, slices.length);
                }
                sq.state[i] = SendWorkQueue.FILLING;
                fillingSeq = seq;
            }
            sq.next++;
            return true;
        }
    }

    private void noteFilled() {
        if (fillingSeq >= 0 && sender.idle()) {
            synchronized (conn) {
                int i = conn.sq.slot(fillingSeq);
                conn.sq.endPosition[i] = filledBytes;
                conn.sq.state[i] = SendWorkQueue.FILLED;
            }
            fillingSeq = -1;
        }
    }

    /** Completes every Send and Write whose last byte TCP has taken, in order. */
    private void completeTransmitted() {
        synchronized (conn) {
            SendWorkQueue sq = conn.sq;
            long seq = Math.max(transmitScan, sq.head);
            for (; seq < sq.next; seq++) {
                int i = sq.slot(seq);
                byte s = sq.state[i];
                if (s == SendWorkQueue.FILLING || s == SendWorkQueue.FILLED && sq.endPosition[i] > writtenBytes) {
                    break;
                }
                if (s == SendWorkQueue.FILLED) {
                    conn.completeSend(i, WcStatus.SUCCESS);
                }
            }
            transmitScan = seq;
            sq.retire();
        }
    }

    // ---- RdmapReceiver.Host ----

    @Override
    public boolean nextReceive(ReceiveBuffer into) {
        synchronized (conn) {
            RecvWorkQueue rq = conn.rq;
            if (rq.taken >= rq.tail) {
                return false;
            }
            int i = rq.slot(rq.taken);
            into.set(rq.wrId[i], rq.slices[i], rq.slices[i].length);
            rq.taken++;
            return true;
        }
    }

    @Override
    public void sendReceived(ReceiveBuffer receive, long lengthBytes, int opcode, int invalidatedStag) {
        synchronized (conn) {
            conn.completeRecv(WcStatus.SUCCESS, lengthBytes, invalidatedStag, Rdmap.solicited(opcode));
        }
    }

    @Override
    public void readRequested(RdmapReceiver.ReadRequest request) {
        inboundReads.add(request);
    }

    @Override
    public void readCompleted(long token, long lengthBytes) {
        synchronized (conn) {
            conn.completeSend(conn.sq.slot(token), WcStatus.SUCCESS);
            conn.sq.retire();
        }
    }

    @Override
    public void terminateReceived(int layer, int etype, int ecode, boolean wellFormed) {
        peerTerminate = Terminate.describe(layer, etype, ecode) + (wellFormed ? "" : "; not on queue 2 with the expected MSN");
    }

    // ---- StagResolver: the device's, noting a refused Read Response sink ----

    @Override
    public StagError resolve(int stag, Use use, Window into) {
        StagError e = conn.qp.resolver().resolve(stag, use, into);
        if (e != null && use == Use.LOCAL_WRITE) {
            localSinkRefused = true;
        }
        return e;
    }

    @Override
    public StagError invalidate(int stag) {
        return conn.qp.resolver().invalidate(stag);
    }
}

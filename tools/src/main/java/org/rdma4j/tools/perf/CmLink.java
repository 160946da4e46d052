// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * perftest's control channel with -R ({@code create_comm_struct}, {@code rdma_client_connect},
 * {@code rdma_server_connect}, {@code rdma_write_data}/{@code rdma_read_data}): instead of a TCP socket,
 * one RC QP connected by the connection manager (RDMA_PS_TCP, on perftest's port), and every message
 * of the exchange one SEND into the peer's single posted receive of {@value #RECV_BYTES} bytes, which
 * the reader posts again after each message. Writing waits for the SEND's completion (the peer's QP
 * retries RNR forever: rnr_retry 7), reading for a receive; both at most the timeout. The QP and its
 * buffers live on the device the connection manager chose for the address. Not thread safe.
 */
final class CmLink implements AutoCloseable {
    /** perftest's receive: sizeof(struct pingpong_dest), the largest message of the exchange. */
    static final int RECV_BYTES = 56;
    private static final int SEND_OFF = 64;
    /** perftest's timeout for address and route resolution, milliseconds. */
    static final int RESOLVE_MS = 2000;

    private final CmEventChannel channel;
    private CmId listener;
    private CmId id;
    private ProtectionDomain pd;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private QueuePair qp;
    private Arena arena;
    private MemoryRegion mr;
    private final WorkCompletion[] wc = WorkCompletion.array(1);
    private final RecvWorkRequest recvWr = new RecvWorkRequest();
    private final SendWorkRequest sendWr = new SendWorkRequest();
    private int timeoutMs;
    private boolean peerGone;

    private CmLink(int timeoutMs) {
        this.channel = new CmEventChannel();
        this.timeoutMs = timeoutMs;
    }

    /**
     * The server's first half: binds {@code addr} (a wildcard: every device) and listens, so that a
     * client may connect from now on.
     */
    static CmLink listen(InetSocketAddress addr, int timeoutMs) throws PerfFailure {
        CmLink l = new CmLink(timeoutMs);
        try {
            l.listener = l.channel.createId(PortSpace.TCP);
            l.listener.bindAddr(addr);
            l.listener.listen(1);
            return l;
        } catch (VerbsException e) {
            l.close();
            throw PerfFailure.of(" rdma_bind_addr failed", e);
        }
    }

    /** The server's second half: waits at most {@code acceptTimeoutMs} for one client and accepts it. */
    void accept(int acceptTimeoutMs, int qpTimeout) throws PerfFailure {
        try {
            CmEvent e = next(acceptTimeoutMs);
            if (e == null) {
                throw new PerfFailure("rdma_get_cm_events failed", "rdma4j: no client connected within "
                        + acceptTimeoutMs / 1000 + " s (--exchange-timeout)");
            }
            try {
                if (e.type() != CmEventType.CONNECT_REQUEST) {
                    throw new PerfFailure("bad event waiting for connect request " + e.type().ordinal());
                }
                id = e.id();
                setUp(qpTimeout);
                id.accept(connParam());
            } finally {
                e.ack();
            }
            // perftest's server goes on without waiting for ESTABLISHED: the first message waits for it
            listener.close();
            listener = null;
        } catch (VerbsException e) {
            close();
            throw PerfFailure.of("Function rdma_accept failed", e);
        } catch (PerfFailure f) {
            close();
            throw f;
        }
    }

    /**
     * The client: resolves {@code dst} (from {@code src}, or the address that reaches it), connects and
     * waits for ESTABLISHED; a REJECTED (no listener there), UNREACHABLE or timeout is an error at once,
     * as perftest's.
     */
    static CmLink connect(InetSocketAddress src, InetSocketAddress dst, int qpTimeout, int timeoutMs)
            throws PerfFailure {
        CmLink l = new CmLink(timeoutMs);
        try {
            l.id = l.channel.createId(PortSpace.TCP);
            l.id.resolveAddr(src, dst, RESOLVE_MS);
            l.expect(CmEventType.ADDR_RESOLVED, RESOLVE_MS + 1000, "rdma_resolve_addr");
            l.id.setAckTimeout(qpTimeout);
            l.id.resolveRoute(RESOLVE_MS);
            l.expect(CmEventType.ROUTE_RESOLVED, RESOLVE_MS + 1000, "rdma_resolve_route");
            l.setUp(qpTimeout);
            l.id.connect(connParam());
            l.expect(CmEventType.ESTABLISHED, timeoutMs, "rdma_connect to " + dst);
            return l;
        } catch (VerbsException e) {
            l.close();
            throw PerfFailure.of("Unable to perform rdma_client function", e);
        } catch (PerfFailure f) {
            l.close();
            throw f;
        }
    }

    private static ConnParam connParam() {
        // perftest's comm QP: a SEND-only RC QP, retry_count 7, rnr_retry_count 7, no private data
        return new ConnParam().retryCount(PerfParams.DEF_RETRY_COUNT).rnrRetryCount(7);
    }

    /** ctx_init for the comm QP, then its one receive posted before connecting. */
    private void setUp(int qpTimeout) {
        Context ctx = id.context();
        pd = ctx.allocPd();
        sendCq = ctx.createCq(2);
        recvCq = ctx.createCq(2);
        qp = id.createQp(pd, new QpInitAttr(QpType.RC, sendCq, recvCq).cap(new QpCap(2, 2, 1, 1, 0)));
        arena = Arena.ofShared();
        MemorySegment buf = arena.allocate(2 * SEND_OFF, 64);
        mr = pd.regMr(buf, Access.LOCAL_WRITE);
        recvWr.wrId(1).sge(mr, 0, RECV_BYTES);
        sendWr.wrId(2).flags(SendFlag.SIGNALED).sge(mr, SEND_OFF, RECV_BYTES).send();
        qp.postRecv(recvWr);
        if (listener != null) {
            id.setAckTimeout(qpTimeout);
        }
    }

    private void expect(CmEventType want, int waitMs, String what) throws PerfFailure {
        CmEvent e = next(waitMs);
        if (e == null) {
            throw new PerfFailure(what + " failed", "rdma4j: no " + want + " within " + waitMs / 1000.0 + " s");
        }
        try {
            if (e.type() != want) {
                PerfFailure f = new PerfFailure("Unexpected CM event " + e.type().ordinal() + " (" + e.type()
                        + ", status " + e.status() + ") after " + what);
                if (e.type() == CmEventType.REJECTED) {
                    f.then("rdma4j: nothing listens there (is the server running, with -R, on this port?)");
                } else if (e.detail() != null) {
                    f.then("rdma4j: " + e.detail());
                }
                throw f;
            }
        } finally {
            e.ack();
        }
    }

    private CmEvent next(int waitMs) throws PerfFailure {
        try {
            return channel.getEvent(waitMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerfFailure("rdma_get_cm_events failed", "rdma4j: interrupted");
        }
    }

    /** The id's device (the connection manager picked it by address). */
    Context context() {
        return id.context();
    }

    /** The id's port on that device. */
    int portNum() {
        return id.portNum();
    }

    /** The address of this end (the client's test QPs connect from it). */
    InetSocketAddress localAddress() {
        return id.localAddress();
    }

    /** The connected peer's address, or null before there is one. */
    InetSocketAddress peer() {
        try {
            return id == null ? null : id.remoteAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private String peerText() {
        InetSocketAddress a = peer();
        return a == null ? "the peer" : a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    void timeoutMs(int ms) {
        timeoutMs = ms;
    }

    int timeoutMs() {
        return timeoutMs;
    }

    /** rdma_write_data: one SEND of {@code b}, waits for its completion. */
    void write(byte[] b, String what, long deadline) throws PerfFailure {
        if (b.length > RECV_BYTES) {
            throw new IllegalArgumentException(b.length + " bytes do not fit the peer's receive");
        }
        MemorySegment.copy(b, 0, mr.segment(), ValueLayout.JAVA_BYTE, SEND_OFF, b.length);
        sendWr.setSge(0, mr.address() + SEND_OFF, b.length, mr.lkey());
        try {
            qp.postSend(sendWr);
        } catch (VerbsException e) {
            throw PerfFailure.of("Function ibv_post_send failed", e);
        }
        WorkCompletion w = await(sendCq, "Couldn't send " + what, deadline);
        if (w.status() != WcStatus.SUCCESS || w.opcode() != WcOpcode.SEND) {
            throw new PerfFailure(" Bad wc status " + w.status().value(),
                    "rdma4j: sending " + what + " completed with " + w.status() + (peerGone ? " (the peer disconnected)" : ""));
        }
    }

    /** rdma_read_data: waits for the next message, which must be {@code b.length} bytes; posts the receive again. */
    void read(byte[] b, String what, long deadline) throws PerfFailure {
        WorkCompletion w = await(recvCq, "Couldn't read " + what, deadline);
        if (w.status() != WcStatus.SUCCESS || w.opcode() != WcOpcode.RECV) {
            throw new PerfFailure("Bad wc status -- " + w.status().value() + " -- " + w.wrId(),
                    "rdma4j: receiving " + what + " completed with " + w.status()
                            + (peerGone ? " (the peer disconnected)" : ""));
        }
        if (w.byteLen() != b.length) {
            throw new PerfFailure("Couldn't read " + what, "rdma4j: the peer sent " + w.byteLen() + " bytes where "
                    + b.length + " belong (a perftest version with another message layout?)");
        }
        MemorySegment.copy(mr.segment(), ValueLayout.JAVA_BYTE, 0, b, 0, b.length);
        try {
            qp.postRecv(recvWr);
        } catch (VerbsException e) {
            throw PerfFailure.of("Couldn't post send ", e);
        }
    }

    /**
     * Polls {@code cq} until a completion, the peer's disconnect (then flushes come) or {@code deadline}
     * ({@link System#nanoTime()}: the end of the exchange's current step).
     */
    private WorkCompletion await(CompletionQueue cq, String what, long deadline) throws PerfFailure {
        int spins = 0;
        while (true) {
            if (cq.poll(wc, 1) == 1) {
                return wc[0];
            }
            if (++spins < 2000) {
                Thread.onSpinWait();
                continue;
            }
            if ((spins & 63) == 0) {
                watchEvents();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new PerfFailure(what, peerGone ? "rdma4j: the peer disconnected"
                        : "rdma4j: no answer from " + peerText() + " within " + timeoutMs / 1000.0
                                + " s (--exchange-timeout)");
            }
            LockSupport.parkNanos(20_000);
        }
    }

    /**
     * Takes the channel's events: a DISCONNECTED means the peer is gone; it is answered at once
     * (rdma_disconnect: the QP to ERROR, the DREP), so the work still posted flushes.
     */
    private void watchEvents() throws PerfFailure {
        CmEvent e = next(0);
        if (e != null) {
            if (e.type() == CmEventType.DISCONNECTED || e.type() == CmEventType.DEVICE_REMOVAL) {
                peerGone = true;
                try {
                    id.disconnect();
                } catch (VerbsException ignored) {
                    // already down
                }
            }
            e.ack();
        }
    }

    private boolean closed;

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (id != null && qp != null) {
            try {
                id.destroyQp();
            } catch (RuntimeException ignored) {
                // gone already
            }
        }
        // the verbs resources before the id: the id's release closes the connection manager's context
        // only when nothing of it is open any more
        for (AutoCloseable r : new AutoCloseable[] {mr, sendCq, recvCq, pd, id, listener}) {
            if (r != null) {
                try {
                    r.close();
                } catch (Exception ignored) {
                    // closing; destroying an id is safe in every state
                }
            }
        }
        if (arena != null) {
            arena.close();
            arena = null;
        }
        channel.close();
    }
}

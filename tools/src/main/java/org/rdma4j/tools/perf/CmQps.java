// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.verbs.VerbsException;

/**
 * The test's QPs connected by the connection manager (perftest's {@code create_rdma_cm_connection}
 * with -R): the server listens on perftest's port (backlog: the number of QPs), creates each QP on the
 * id of a CONNECT_REQUEST and accepts it; the client resolves address and route for one id per QP,
 * creates the QP and connects, and waits for every ESTABLISHED. The client's first requests may reach
 * the server before it listens (perftest starts listening only after the hand shake that precedes
 * this): a REJECTED then starts the client over after 100 ms, as perftest's ten retries do, here until
 * the exchange timeout. The QPs are the ids' (rdma_create_qp); {@link #close()} destroys them and the
 * ids (a connected id sends a DREQ). Not thread safe.
 */
final class CmQps implements AutoCloseable {
    private final PerfParams p;
    private final CmEventChannel channel = new CmEventChannel();
    private CmId listener;
    private final List<CmId> ids = new ArrayList<>();
    private int established;

    private CmQps(PerfParams p) {
        this.p = p;
    }

    /** The server's listener on {@code addr}, ready before the hand shake that lets the client connect. */
    static CmQps listen(PerfParams p, InetSocketAddress addr) throws PerfFailure {
        CmQps c = new CmQps(p);
        try {
            c.listener = c.channel.createId(PortSpace.TCP);
            c.listener.bindAddr(addr);
            c.listener.listen(p.numQps);
            return c;
        } catch (VerbsException e) {
            c.close();
            throw PerfFailure.of("Failed to bind RDMA CM address on the server.", e);
        }
    }

    static CmQps client(PerfParams p) {
        return new CmQps(p);
    }

    /** perftest's conn_param for the test QPs. */
    private ConnParam connParam() {
        ConnParam c = new ConnParam().retryCount(PerfParams.DEF_RETRY_COUNT).rnrRetryCount(PerfParams.DEF_RETRY_COUNT);
        if (p.verb() == Verb.READ || p.verb() == Verb.ATOMIC) {
            c.responderResources(p.outReads).initiatorDepth(p.outReads);
        }
        return c;
    }

    /** rdma_cm_server_connection: accepts {@code p.numQps} requests, each with a new QP of {@code res}. */
    void accept(PerfResources res, int timeoutMs) throws PerfFailure {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (ids.size() < p.numQps) {
            CmEvent e = next(deadline);
            if (e == null) {
                throw new PerfFailure("Failed to create RDMA CM connection.", "rdma4j: " + ids.size() + " of "
                        + p.numQps + " QPs connected within " + timeoutMs / 1000 + " s (--exchange-timeout)");
            }
            try {
                switch (e.type()) {
                    case CONNECT_REQUEST -> {
                        CmId id = e.id();
                        ids.add(id);
                        int i = ids.size() - 1;
                        sameDevice(res, id);
                        id.setAckTimeout(p.qpTimeout);
                        id.setMinRnrTimer(PerfParams.MIN_RNR_TIMER);
                        res.createCmQp(i, id);
                        id.accept(connParam());
                    }
                    case ESTABLISHED -> established++;
                    case DISCONNECTED, TIMEWAIT_EXIT -> { }
                    default -> throw eventError(e);
                }
            } catch (VerbsException x) {
                throw PerfFailure.of("Failed to accept RDMA CM connection.", x);
            } finally {
                e.ack();
            }
        }
        // perftest's server stops listening once every QP is accepted and goes on without waiting for
        // the ESTABLISHED events (the client waits for them before its next message)
        listener.close();
        listener = null;
    }

    /**
     * rdma_cm_client_connection: connects {@code p.numQps} QPs of {@code res} from {@code src} to
     * {@code dst}; a REJECTED starts over (the server may not listen yet) until {@code timeoutMs}.
     */
    void connect(PerfResources res, InetSocketAddress src, InetSocketAddress dst, int timeoutMs)
            throws PerfFailure {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int attempts = 0;
        while (true) {
            attempts++;
            CmEvent rejected = null;
            try {
                rejected = attempt(res, src, dst, deadline);
            } catch (VerbsException e) {
                throw PerfFailure.of("Failed to connect RDMA CM events.", e);
            }
            if (rejected == null) {
                return;
            }
            dropIds(res);
            if (System.nanoTime() - deadline > 0) {
                throw new PerfFailure("Failed to connect RDMA CM client, tried " + attempts + " times.",
                        "rdma4j: RDMA CM event error: " + rejected.type() + "; error: " + rejected.status()
                                + " (nothing listens on " + dst + " with -R?)");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PerfFailure("Failed to connect RDMA CM client.", "rdma4j: interrupted");
            }
        }
    }

    /** One try: null when every QP is ESTABLISHED; the REJECTED event when the server said no. */
    private CmEvent attempt(PerfResources res, InetSocketAddress src, InetSocketAddress dst, long deadline)
            throws PerfFailure {
        established = 0;
        for (int i = 0; i < p.numQps; i++) {
            CmId id = channel.createId(PortSpace.TCP);
            ids.add(id);
            id.resolveAddr(src, dst, CmLink.RESOLVE_MS);
        }
        while (established < p.numQps) {
            CmEvent e = next(deadline);
            if (e == null) {
                throw new PerfFailure("Failed to connect RDMA CM events.", "rdma4j: " + established + " of "
                        + p.numQps + " QPs connected within the exchange timeout (--exchange-timeout)");
            }
            try {
                CmId id = e.id();
                int i = ids.indexOf(id);
                switch (e.type()) {
                    case ADDR_RESOLVED -> {
                        id.setAckTimeout(p.qpTimeout);
                        id.resolveRoute(CmLink.RESOLVE_MS);
                    }
                    case ROUTE_RESOLVED -> {
                        sameDevice(res, id);
                        res.createCmQp(i, id);
                        id.connect(connParam());
                    }
                    case ESTABLISHED -> established++;
                    case REJECTED -> {
                        return e;
                    }
                    case DISCONNECTED, TIMEWAIT_EXIT -> { }
                    default -> throw eventError(e);
                }
            } finally {
                e.ack();
            }
        }
        return null;
    }

    private static PerfFailure eventError(CmEvent e) {
        PerfFailure f = new PerfFailure("RDMA CM event error:", "Event: " + e.type() + "; error: " + e.status() + ".");
        return e.detail() == null ? f : f.then("rdma4j: " + e.detail());
    }

    /** The QPs must be on the device the control channel's connection manager picked (their buffers are). */
    private static void sameDevice(PerfResources res, CmId id) throws PerfFailure {
        String want = res.ctx.device().name();
        String got = id.context().device().name();
        if (!want.equals(got)) {
            throw new PerfFailure("Failed to create QP.", "rdma4j: the connection manager put a test QP on "
                    + got + ", the exchange's QP on " + want);
        }
    }

    private CmEvent next(long deadline) throws PerfFailure {
        long left = deadline - System.nanoTime();
        try {
            return channel.getEvent(Math.max(0, left), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerfFailure("Failed to get RDMA CM event.", "rdma4j: interrupted");
        }
    }

    /**
     * rdma_cm_disconnect_nodes: each side disconnects every QP and waits (at most {@code waitMs}) for
     * their DISCONNECTED events. Both sides disconnect, as with the kernel's CM: a DREQ is answered
     * only when the side that receives it calls disconnect (or destroys its id), so a server that left
     * it to its ids' close would hold the client until then.
     */
    void disconnect(int waitMs) {
        int left = 0;
        for (CmId id : ids) {
            try {
                id.disconnect();
                left++;
            } catch (VerbsException ignored) {
                // already disconnected by the peer
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (left > 0) {
            CmEvent e;
            try {
                e = next(deadline);
            } catch (PerfFailure f) {
                return;
            }
            if (e == null) {
                return;
            }
            if (e.type() == CmEventType.DISCONNECTED) {
                left--;
            }
            e.ack();
        }
    }

    private void dropIds(PerfResources res) {
        for (int i = 0; i < ids.size(); i++) {
            destroy(ids.get(i));
            res.forgetCmQp(i);
        }
        ids.clear();
    }

    private static void destroy(CmId id) {
        try {
            id.destroyQp();
        } catch (RuntimeException ignored) {
            // no QP, or gone
        }
        try {
            id.close();
        } catch (RuntimeException ignored) {
            // safe in every state
        }
    }

    /** Destroys the ids' QPs (rdma_destroy_qp), before the rest of the resources. */
    void destroyQps() {
        for (CmId id : ids) {
            try {
                id.destroyQp();
            } catch (RuntimeException ignored) {
                // no QP, or gone
            }
        }
    }

    /** Destroys the ids (after their QPs and the resources: the last id's release closes the shared context). */
    @Override
    public void close() {
        for (CmId id : ids) {
            destroy(id);
        }
        ids.clear();
        if (listener != null) {
            listener.close();
            listener = null;
        }
        channel.close();
    }
}

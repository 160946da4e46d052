// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CmEvents;
import org.rdma4j.verbs.VerbsException;

/**
 * rping's two roles on rdma4j's connection manager. One thread per connection drives it ({@link
 * Connection}), as rping's main (or persistent-server) thread does; a dispatcher thread ({@link Dispatcher})
 * reads the event channel and hands each id's events to its connection, as rping's cm_thread does. Every
 * wait is bounded by the step timeout. States and messages are rping's, numbered as its {@code enum
 * test_state}.
 */
final class Rping {
    // rping's enum test_state
    static final int IDLE = 1;
    static final int CONNECT_REQUEST = 2;
    static final int ADDR_RESOLVED = 3;
    static final int ROUTE_RESOLVED = 4;
    static final int CONNECTED = 5;
    static final int RDMA_READ_ADV = 6;
    static final int RDMA_READ_COMPLETE = 7;
    static final int RDMA_WRITE_ADV = 8;
    static final int RDMA_WRITE_COMPLETE = 9;
    static final int DISCONNECTED = 10;
    static final int ERROR = 11;

    private static final int RESOLVE_TIMEOUT_MS = 2000;

    final PrintWriter out;
    final PrintWriter err;
    final int size;
    final int count;
    final boolean verbose;
    final boolean validate;
    final boolean debug;
    final long stepNs;
    /** -q: the QP is created with the verbs and moved by this program with rdma_init_qp_attr's values. */
    final boolean selfCreateQp;

    Rping(PrintWriter out, PrintWriter err, int size, int count, boolean verbose, boolean validate, boolean debug,
            long stepNs, boolean selfCreateQp) {
        this.selfCreateQp = selfCreateQp;
        this.out = out;
        this.err = err;
        this.size = size;
        this.count = count;
        this.verbose = verbose;
        this.validate = validate;
        this.debug = debug;
        this.stepNs = stepNs;
    }

    // ------------------------------------------------------------------ client

    int runClient(InetSocketAddress src, InetSocketAddress dst) throws InterruptedException {
        try (CmEventChannel ch = new CmEventChannel(); Dispatcher events = new Dispatcher(ch, this::debug);
             CmId id = ch.createId(PortSpace.TCP)) {
            LinkedBlockingQueue<CmEvent> mine = events.register(id);
            id.resolveAddr(src, dst, RESOLVE_TIMEOUT_MS);
            if (!expectEvent(mine, CmEventType.ADDR_RESOLVED)) {
                return fail("waiting for addr/route resolution state " + ERROR);
            }
            id.resolveRoute(RESOLVE_TIMEOUT_MS);
            if (!expectEvent(mine, CmEventType.ROUTE_RESOLVED)) {
                return fail("waiting for addr/route resolution state " + ERROR);
            }
            try (Connection c = new Connection(this, id, mine, false)) {
                c.postRecv();
                id.connect(connParam(c));
                if (!expectEvent(mine, selfCreateQp ? CmEventType.CONNECT_RESPONSE : CmEventType.ESTABLISHED)) {
                    err.println("wait for CONNECTED state " + ERROR);
                    return fail("connect error -1");
                }
                if (selfCreateQp) {
                    // rping_connect_client with -q: the QP to RTS by hand, then the RTU (rdma_establish)
                    try {
                        c.selfModify();
                    } catch (VerbsException e) {
                        return fail("rping_modify_qp: " + e.getMessage());
                    }
                    id.establish();
                }
                c.state = CONNECTED;
                int ret = c.testClient();
                if (ret != 0) {
                    err.println("rping client failed: " + ret);
                }
                c.disconnect();
                return ret == 0 ? 0 : 1;
            }
        }
    }

    // ------------------------------------------------------------------ server

    int runServer(InetSocketAddress bind, boolean persistent, long acceptNs) throws InterruptedException {
        try (CmEventChannel ch = new CmEventChannel(); Dispatcher events = new Dispatcher(ch, this::debug);
             CmId listener = ch.createId(PortSpace.TCP)) {
            LinkedBlockingQueue<CmEvent> requests = events.register(listener);
            listener.bindAddr(bind);
            listener.listen(3);
            debug("listening on " + listener.localAddress());
            int failures = 0;
            do {
                CmEvent e = acceptNs == 0 ? requests.take() : requests.poll(acceptNs, TimeUnit.NANOSECONDS);
                if (e == null) {
                    return fail("wait for CONNECT_REQUEST state " + IDLE + " (no connection within "
                            + TimeUnit.NANOSECONDS.toSeconds(acceptNs) + " s)");
                }
                if (e.type() != CmEventType.CONNECT_REQUEST) {
                    cmaError(e);
                    e.ack();
                    return fail("wait for CONNECT_REQUEST state " + ERROR);
                }
                CmId child = e.id();
                LinkedBlockingQueue<CmEvent> childEvents = events.register(child);
                e.ack();
                debug("child cma " + child + " from " + child.remoteAddress());
                if (persistent) {
                    Thread.ofPlatform().daemon().name("rping-server-" + child.remoteAddress())
                            .start(() -> serveQuietly(child, childEvents));
                } else {
                    failures += serve(child, childEvents);
                }
            } while (persistent);
            return failures == 0 ? 0 : 1;
        }
    }

    private void serveQuietly(CmId child, LinkedBlockingQueue<CmEvent> events) {
        try {
            serve(child, events);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            err.println("rping server failed: " + e.getMessage());
            err.flush();
        }
    }

    /** One connection of the server: accept, ping until the client disconnects. 0 on success. */
    private int serve(CmId child, LinkedBlockingQueue<CmEvent> events) throws InterruptedException {
        try (child; Connection c = new Connection(this, child, events, true)) {
            c.state = CONNECT_REQUEST;
            c.postRecv();
            if (selfCreateQp) {
                try {
                    c.selfModify(); // rping_accept with -q: the QP to RTS before the REP
                } catch (VerbsException e) {
                    err.println("rping_modify_qp: " + e.getMessage());
                    return 1;
                }
                child.accept(connParam(c));
            } else {
                child.accept(new ConnParam());
            }
            if (!expectEvent(events, CmEventType.ESTABLISHED)) {
                err.println("wait for CONNECTED state " + ERROR);
                err.println("connect error -1");
                return 1;
            }
            c.state = CONNECTED;
            int ret = c.testServer();
            if (ret != 0) {
                err.println("rping server failed: " + ret);
            }
            c.disconnect();
            return ret;
        } finally {
            out.flush();
            err.flush();
        }
    }

    // ------------------------------------------------------------------ small things

    /** rping_init_conn_param: with -q the QP number goes in the parameters (the id has no QP). */
    private ConnParam connParam(Connection c) {
        ConnParam p = new ConnParam().responderResources(1).initiatorDepth(1).retryCount(7).rnrRetryCount(7);
        return selfCreateQp ? p.qpNum(c.qp.qpn()) : p;
    }

    /** Waits for the next event of an id; true if it is {@code want}, else prints rping's message. */
    private boolean expectEvent(LinkedBlockingQueue<CmEvent> events, CmEventType want) throws InterruptedException {
        return CmEvents.next(events::poll, stepNs, TimeUnit.NANOSECONDS, e -> {
            debug("cma_event type " + CmEvents.name(e.type()) + " cma_id " + e.id());
            if (e.type() == want) {
                return 1;
            }
            cmaError(e);
            return 0;
        }, () -> {
            err.println("rdma4j: no " + CmEvents.name(want) + " within " + TimeUnit.NANOSECONDS.toSeconds(stepNs)
                    + " s (--timeout)");
            return 0;
        }) == 1;
    }

    /** rping's line for an error event, then rdma4j's account of it when the event has one. */
    void cmaError(CmEvent e) {
        String detail = e.detail() == null ? "" : System.lineSeparator() + "rdma4j: " + e.detail();
        err.println("cma event " + CmEvents.name(e.type()) + ", error " + e.status() + detail);
    }

    private int fail(String message) {
        err.println(message);
        return 1;
    }

    void debug(String message) {
        if (debug) {
            out.println(message);
        }
    }
}

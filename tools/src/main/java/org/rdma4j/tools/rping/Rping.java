// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.text.PeerText;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * rping's two roles on rdma4j's connection manager. One thread per connection drives it, as rping's
 * main (or persistent-server) thread does; a dispatcher thread reads the event channel and hands each
 * id's events to its connection, as rping's cm_thread does. Every wait is bounded by the step timeout.
 * States and messages are rping's, numbered as its {@code enum test_state}.
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

    /** struct rping_rdma_info: be64 buf, be32 rkey, be32 size. */
    static final int INFO_SIZE = 16;
    static final int SQ_DEPTH = 16;
    private static final int RESOLVE_TIMEOUT_MS = 2000;
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final PrintWriter out;
    private final PrintWriter err;
    private final int size;
    private final int count;
    private final boolean verbose;
    private final boolean validate;
    private final boolean debug;
    private final long stepNs;
    /** -q: the QP is created with the verbs and moved by this program with rdma_init_qp_attr's values. */
    private final boolean selfCreateQp;

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
        try (CmEventChannel ch = new CmEventChannel(); Dispatcher events = new Dispatcher(ch);
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
            try (Connection c = new Connection(id, mine, false)) {
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
        try (CmEventChannel ch = new CmEventChannel(); Dispatcher events = new Dispatcher(ch);
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
        try (child; Connection c = new Connection(child, events, true)) {
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

    // ------------------------------------------------------------------ one connection

    /** rping's struct rping_cb for one connection: its QP, CQ, buffers and state. */
    private final class Connection implements AutoCloseable {
        final CmId id;
        final LinkedBlockingQueue<CmEvent> events;
        final boolean server;
        final Arena arena = Arena.ofShared();
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion recvMr;
        MemoryRegion sendMr;
        MemoryRegion rdmaMr;
        MemoryRegion startMr;
        final RecvWorkRequest recvWr = new RecvWorkRequest();
        final SendWorkRequest sendWr = new SendWorkRequest();
        final SendWorkRequest rdmaWr = new SendWorkRequest();
        final WorkCompletion[] wc = WorkCompletion.array(1);
        volatile int state = IDLE;
        long remoteAddr;
        int remoteRkey;
        int remoteLen;

        Connection(CmId id, LinkedBlockingQueue<CmEvent> events, boolean server) {
            this.id = id;
            this.events = events;
            this.server = server;
            boolean ok = false;
            try {
                pd = id.context().allocPd();
                cq = id.context().createCq(SQ_DEPTH * 2);
                QpInitAttr init = new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(SQ_DEPTH, 2, 1, 1, 0));
                if (selfCreateQp) {
                    // rping_create_qp with -q: ibv_create_qp, then INIT with no remote access yet
                    qp = pd.createQp(init);
                    qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(id.portNum()).accessFlags(0));
                } else {
                    qp = id.createQp(pd, init);
                }
                recvMr = pd.regMr(arena.allocate(INFO_SIZE, 8), Access.LOCAL_WRITE);
                sendMr = pd.regMr(arena.allocate(INFO_SIZE, 8), 0);
                rdmaMr = pd.regMr(arena.allocate(size, 64),
                        Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
                if (!server) {
                    startMr = pd.regMr(arena.allocate(size, 64),
                            Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
                }
                recvWr.wrId(1).sge(recvMr, 0, INFO_SIZE);
                sendWr.wrId(2).flags(SendFlag.SIGNALED).sge(sendMr, 0, INFO_SIZE).send();
                rdmaWr.wrId(3).flags(SendFlag.SIGNALED).sge(rdmaMr, 0, size);
                ok = true;
            } finally {
                if (!ok) {
                    close();
                }
            }
        }

        void postRecv() {
            qp.postRecv(recvWr);
        }

        /** rping_self_modify_qp: INIT, RTR and RTS with the attributes rdma_init_qp_attr gives. */
        void selfModify() {
            for (QpState s : new QpState[] {QpState.INIT, QpState.RTR, QpState.RTS}) {
                qp.modify(id.initQpAttr(s));
            }
        }

        /** rping_test_client: count pings (0: until stopped or disconnected). 0 on success. */
        int testClient() throws InterruptedException {
            int start = 65;
            MemorySegment startBuf = startMr.segment();
            MemorySegment rdmaBuf = rdmaMr.segment();
            for (int ping = 0; count == 0 || ping < count; ping++) {
                state = RDMA_READ_ADV;
                byte[] head = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
                int cc = Math.min(head.length, size);
                MemorySegment.copy(head, 0, startBuf, ValueLayout.JAVA_BYTE, 0, cc);
                int c = start;
                for (int i = cc; i < size; i++) {
                    startBuf.set(ValueLayout.JAVA_BYTE, i, (byte) c);
                    if (++c > 122) {
                        c = 65;
                    }
                }
                if (++start > 122) {
                    start = 65;
                }
                startBuf.set(ValueLayout.JAVA_BYTE, size - 1, (byte) 0);

                formatSend(startMr);
                qp.postSend(sendWr);
                if (!waitFor(RDMA_WRITE_ADV)) {
                    return disconnectedOr("wait for RDMA_WRITE_ADV state " + state);
                }
                formatSend(rdmaMr);
                qp.postSend(sendWr);
                if (!waitFor(RDMA_WRITE_COMPLETE)) {
                    return disconnectedOr("wait for RDMA_WRITE_COMPLETE state " + state);
                }
                if (validate && startBuf.mismatch(rdmaBuf) != -1) {
                    err.println("data mismatch!");
                    return -1;
                }
                if (verbose) {
                    out.println("ping data: " + PeerText.cString(rdmaBuf));
                }
            }
            return 0;
        }

        /** rping_test_server: serve pings until the client disconnects (0) or something fails. */
        int testServer() throws InterruptedException {
            MemorySegment rdmaBuf = rdmaMr.segment();
            while (true) {
                if (!waitFor(RDMA_READ_ADV)) {
                    return disconnectedOr("wait for RDMA_READ_ADV state " + state);
                }
                if (remoteLen > size || remoteLen < 0) {
                    err.println("Received bogus data, size " + remoteLen + " (the buffer is " + size + ")");
                    return -1;
                }
                rdmaWr.setSge(0, rdmaMr.address(), remoteLen, rdmaMr.lkey()).read(remoteAddr, remoteRkey);
                qp.postSend(rdmaWr);
                if (!waitFor(RDMA_READ_COMPLETE)) {
                    return disconnectedOr("wait for RDMA_READ_COMPLETE state " + state);
                }
                if (verbose) {
                    out.println("server ping data: " + PeerText.cString(rdmaBuf));
                }
                qp.postSend(sendWr); // tell the client to continue
                if (!waitFor(RDMA_WRITE_ADV)) {
                    return disconnectedOr("wait for RDMA_WRITE_ADV state " + state);
                }
                int len = (int) Math.min(PeerText.length(rdmaBuf) + 1, remoteLen);
                rdmaWr.setSge(0, rdmaMr.address(), len, rdmaMr.lkey()).write(remoteAddr, remoteRkey);
                qp.postSend(rdmaWr);
                if (!waitFor(RDMA_WRITE_COMPLETE)) {
                    return disconnectedOr("wait for RDMA_WRITE_COMPLETE state " + state);
                }
                qp.postSend(sendWr); // tell the client to begin again
            }
        }

        private int disconnectedOr(String message) {
            if (state == DISCONNECTED) {
                return 0;
            }
            err.println(message);
            if (debug) {
                try {
                    err.println("device " + id.context().device().name() + " port " + id.portNum() + " counters: "
                            + id.context().counters(id.portNum()));
                    var a = qp.query();
                    err.printf("qp 0x%06x state %s dest_qpn 0x%06x rq_psn 0x%06x sq_psn 0x%06x path_mtu %s dgid %s"
                            + " sgid_index %d timeout %d retry %d rnr_retry %d%n", qp.qpn(), a.qpState, a.destQpNum,
                            a.rqPsn, a.sqPsn, a.pathMtu, a.ahAttr == null || a.ahAttr.grh() == null ? "-"
                                    : a.ahAttr.grh().dgid(), a.ahAttr == null || a.ahAttr.grh() == null ? -1
                                    : a.ahAttr.grh().sgidIndex(), a.timeout, a.retryCnt, a.rnrRetry);
                } catch (RuntimeException e) {
                    err.println("no counters: " + e.getMessage());
                }
            }
            return -1;
        }

        private void formatSend(MemoryRegion mr) {
            MemorySegment info = sendMr.segment();
            info.set(BE_LONG, 0, mr.address());
            info.set(BE_INT, 8, mr.rkey());
            info.set(BE_INT, 12, size);
            debug("RDMA addr " + Long.toHexString(mr.address()) + " rkey " + Integer.toHexString(mr.rkey()) + " len " + size);
        }

        /**
         * Waits until the state is {@code want} (true), or the connection ends or fails, or the step
         * timeout passes (false; the state says which). Completions and CM events are handled as rping's
         * cq_thread and cm_thread handle them.
         */
        boolean waitFor(int want) throws InterruptedException {
            long deadline = System.nanoTime() + stepNs;
            while (state != want) {
                if (state == ERROR || state == DISCONNECTED) {
                    return false;
                }
                int n = cq.poll(wc, 1);
                if (n == 1) {
                    completion(wc[0]);
                    continue;
                }
                CmEvent e = events.poll(50, TimeUnit.MICROSECONDS);
                if (e != null) {
                    event(e);
                    continue;
                }
                if (System.nanoTime() - deadline > 0) {
                    err.println("rdma4j: no progress for " + TimeUnit.NANOSECONDS.toSeconds(stepNs)
                            + " s (--timeout) in state " + state);
                    return false;
                }
            }
            return true;
        }

        private void completion(WorkCompletion w) {
            if (w.status() != WcStatus.SUCCESS) {
                if (w.status() == WcStatus.WR_FLUSH_ERR) {
                    return; // the QP went to ERROR: the DISCONNECTED event says why
                }
                err.println("cq completion failed status " + w.status().value() + " (" + w.status() + ")");
                state = ERROR;
                return;
            }
            switch (w.opcode()) {
                case SEND -> { }
                case RDMA_WRITE -> state = RDMA_WRITE_COMPLETE;
                case RDMA_READ -> state = RDMA_READ_COMPLETE;
                case RECV -> {
                    if (w.byteLen() != INFO_SIZE) {
                        err.println("Received bogus data, size " + w.byteLen());
                        err.println("recv wc error: -1");
                        state = ERROR;
                        return;
                    }
                    if (server) {
                        MemorySegment info = recvMr.segment();
                        remoteAddr = info.get(BE_LONG, 0);
                        remoteRkey = info.get(BE_INT, 8);
                        remoteLen = info.get(BE_INT, 12);
                        debug("Received rkey " + Integer.toHexString(remoteRkey) + " addr "
                                + Long.toHexString(remoteAddr) + " len " + remoteLen + " from peer");
                        state = state <= CONNECTED || state == RDMA_WRITE_COMPLETE ? RDMA_READ_ADV : RDMA_WRITE_ADV;
                    } else {
                        state = state == RDMA_READ_ADV ? RDMA_WRITE_ADV : RDMA_WRITE_COMPLETE;
                    }
                    postRecv();
                }
                default -> {
                    err.println("unexpected completion " + w.opcode());
                    state = ERROR;
                }
            }
        }

        private void event(CmEvent e) {
            try {
                debug("cma_event type " + eventName(e.type()) + " cma_id " + e.id());
                switch (e.type()) {
                    case DISCONNECTED -> {
                        err.println((server ? "server" : "client") + " DISCONNECT EVENT...");
                        state = DISCONNECTED;
                    }
                    case TIMEWAIT_EXIT, ESTABLISHED -> { }
                    case DEVICE_REMOVAL -> {
                        err.println("cma detected device removal!!!!");
                        state = ERROR;
                    }
                    case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                        cmaError(e);
                        state = ERROR;
                    }
                    default -> err.println("unhandled event: " + eventName(e.type()) + ", ignoring");
                }
            } finally {
                e.ack();
            }
        }

        /** rping_disconnect, then waits (bounded) for DISCONNECTED so the peer's DREQ/DREP exchange ends. */
        void disconnect() throws InterruptedException {
            try {
                if (selfCreateQp) {
                    qp.modify(new QpAttr().state(QpState.ERR)); // the CM does not move a QP it did not create
                }
                id.disconnect();
            } catch (VerbsException e) {
                debug("rdma_disconnect: " + e.getMessage());
            }
            long deadline = System.nanoTime() + stepNs;
            while (state != DISCONNECTED && System.nanoTime() - deadline < 0) {
                CmEvent e = events.poll(10, TimeUnit.MILLISECONDS);
                if (e != null) {
                    event(e);
                }
            }
        }

        @Override
        public void close() {
            if (qp != null) {
                try {
                    if (selfCreateQp) {
                        qp.close();
                    } else {
                        id.destroyQp();
                    }
                } catch (RuntimeException e) {
                    debug("destroy qp: " + e.getMessage());
                }
            }
            for (AutoCloseable r : new AutoCloseable[] {startMr, rdmaMr, sendMr, recvMr, cq, pd}) {
                if (r != null) {
                    try {
                        r.close();
                    } catch (Exception e) {
                        debug("close " + r + ": " + e.getMessage());
                    }
                }
            }
            arena.close();
        }
    }

    // ------------------------------------------------------------------ events

    /**
     * rping's cm_thread: reads the channel and hands each event to the queue of its id (a
     * CONNECT_REQUEST to its listener's). An event for an id nobody registered is acked and dropped.
     */
    private final class Dispatcher implements AutoCloseable {
        private final CmEventChannel channel;
        private final Map<CmId, LinkedBlockingQueue<CmEvent>> queues = new ConcurrentHashMap<>();
        private final Thread thread;
        private volatile boolean running = true;

        Dispatcher(CmEventChannel channel) {
            this.channel = channel;
            this.thread = Thread.ofPlatform().daemon().name("rping-cm").start(this::run);
        }

        LinkedBlockingQueue<CmEvent> register(CmId id) {
            return queues.computeIfAbsent(id, k -> new LinkedBlockingQueue<>());
        }

        private void run() {
            while (running) {
                CmEvent e;
                try {
                    e = channel.getEvent(100, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ex) {
                    return;
                } catch (VerbsException ex) {
                    return; // the channel closed
                }
                if (e == null) {
                    continue;
                }
                CmId owner = e.type() == CmEventType.CONNECT_REQUEST && e.listenId() != null ? e.listenId() : e.id();
                LinkedBlockingQueue<CmEvent> q = owner == null ? null : queues.get(owner);
                if (q != null) {
                    q.add(e);
                } else {
                    debug("event " + eventName(e.type()) + " for an id nobody waits on");
                    e.ack();
                }
            }
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(1000);
            for (LinkedBlockingQueue<CmEvent> q : queues.values()) {
                for (CmEvent e; (e = q.poll()) != null; ) {
                    e.ack();
                }
            }
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
        CmEvent e = events.poll(stepNs, TimeUnit.NANOSECONDS);
        if (e == null) {
            err.println("rdma4j: no " + eventName(want) + " within " + TimeUnit.NANOSECONDS.toSeconds(stepNs)
                    + " s (--timeout)");
            return false;
        }
        try {
            debug("cma_event type " + eventName(e.type()) + " cma_id " + e.id());
            if (e.type() == want) {
                return true;
            }
            cmaError(e);
            return false;
        } finally {
            e.ack();
        }
    }

    private void cmaError(CmEvent e) {
        String detail = e.detail() == null ? "" : System.lineSeparator() + "rdma4j: " + e.detail();
        err.println("cma event " + eventName(e.type()) + ", error " + e.status() + detail);
    }

    static String eventName(CmEventType t) {
        return "RDMA_CM_EVENT_" + t.name();
    }

    private int fail(String message) {
        err.println(message);
        return 1;
    }

    private void debug(String message) {
        if (debug) {
            out.println(message);
        }
    }
}

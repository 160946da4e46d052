// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import static org.rdma4j.tools.rping.Rping.CONNECTED;
import static org.rdma4j.tools.rping.Rping.DISCONNECTED;
import static org.rdma4j.tools.rping.Rping.ERROR;
import static org.rdma4j.tools.rping.Rping.IDLE;
import static org.rdma4j.tools.rping.Rping.RDMA_READ_ADV;
import static org.rdma4j.tools.rping.Rping.RDMA_READ_COMPLETE;
import static org.rdma4j.tools.rping.Rping.RDMA_WRITE_ADV;
import static org.rdma4j.tools.rping.Rping.RDMA_WRITE_COMPLETE;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmId;
import org.rdma4j.tools.cli.CmEvents;
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
 * rping's {@code struct rping_cb} for one connection of {@link Rping}: its QP, CQ, buffers and state, the
 * client's and the server's ping loops, and the handling of its completions and CM events (rping's
 * cq_thread and the part of its cm_thread that concerns one connection). One thread.
 */
final class Connection implements AutoCloseable {
    /** struct rping_rdma_info: be64 buf, be32 rkey, be32 size. */
    static final int INFO_SIZE = 16;
    static final int SQ_DEPTH = 16;
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** What {@link #waitFor} and {@link #disconnect} make of a poll of the events: 1 with an event, 0 without. */
    private static final IntSupplier NO_EVENT = () -> 0;

    private final Rping rping;
    private final PrintWriter out;
    private final PrintWriter err;
    private final int size;
    private final int count;
    private final boolean verbose;
    private final boolean validate;
    private final boolean debug;
    private final long stepNs;
    private final boolean selfCreateQp;
    /** The connection's events, as {@link CmEvents#next} takes them, and their handler. */
    private final CmEvents.Source eventSource;
    private final CmEvents.Handler eventHandler = this::event;
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

    Connection(Rping rping, CmId id, LinkedBlockingQueue<CmEvent> events, boolean server) {
        this.rping = rping;
        this.out = rping.out;
        this.err = rping.err;
        this.size = rping.size;
        this.count = rping.count;
        this.verbose = rping.verbose;
        this.validate = rping.validate;
        this.debug = rping.debug;
        this.stepNs = rping.stepNs;
        this.selfCreateQp = rping.selfCreateQp;
        this.id = id;
        this.events = events;
        this.eventSource = events::poll;
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
            if (CmEvents.next(eventSource, 50, TimeUnit.MICROSECONDS, eventHandler, NO_EVENT) != 0) {
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

    /** One CM event of the connection (acked by {@link CmEvents#next}); {@return 1} */
    private int event(CmEvent e) {
        debug("cma_event type " + CmEvents.name(e.type()) + " cma_id " + e.id());
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
                rping.cmaError(e);
                state = ERROR;
            }
            default -> err.println("unhandled event: " + CmEvents.name(e.type()) + ", ignoring");
        }
        return 1;
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
            CmEvents.next(eventSource, 10, TimeUnit.MILLISECONDS, eventHandler, NO_EVENT);
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

    private void debug(String message) {
        rping.debug(message);
    }
}

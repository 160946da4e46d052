// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import org.rdma4j.tools.device.GidText;
import org.rdma4j.tools.device.PortCounters;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * One run of ibv_rc/uc/ud/srq_pingpong, step for step as the rdma-core examples do it: the same
 * resources with the same sizes, the same QP attributes and masks, the same TCP exchange
 * ({@link Exchange}), the same completion loop and the same output. Failures end the run with the C
 * tool's message on stderr and exit code 1 ({@link PingpongFailure}).
 */
final class Pingpong {
    static final int RECV_WRID = 1;
    static final int SEND_WRID = 2;
    /** ibv_srq_pingpong's MAX_QP: it always exchanges this many addresses. */
    static final int MAX_QP = 256;
    static final int UD_QKEY = 0x11111111;
    /** Bytes of GRH in front of every UD receive. */
    static final int GRH_BYTES = 40;
    /** The page size -c marks (sysconf(_SC_PAGESIZE) on the Linux hosts the C tools run on). */
    static final int PAGE_SIZE = 4096;

    private final Settings s;
    private final PrintWriter out;
    private final PrintWriter err;
    private final Transport t;

    private Context ctx;
    private CompletionChannel channel;
    private ProtectionDomain pd;
    private Arena arena;
    private MemorySegment buf;
    private MemoryRegion mr;
    private CompletionQueue cq;
    private SharedReceiveQueue srq;
    private final List<QueuePair> qps = new ArrayList<>();
    private AddressHandle ah;
    /** The QPs as the guided path prepared them (same order as {@link #qps}). */
    private final List<PreparedQueuePair> prepared = new ArrayList<>();
    private int sendFlags = SendFlag.SIGNALED;
    /** How the loop waits for completions (made once the CQ exists). */
    private CompletionWait waiter;
    /** Where sends start in the buffer (ud: after the GRH area). */
    private int payloadOffset;
    private final RecvWorkRequest recvWr = new RecvWorkRequest();
    private final SendWorkRequest sendWr = new SendWorkRequest();
    /** The data path (made once the QPs exist). */
    private PingpongLoop data;

    Pingpong(Settings settings, PrintWriter out, PrintWriter err) {
        this.s = settings;
        this.t = settings.transport();
        this.out = out;
        this.err = err;
    }

    /** Runs on {@code device}; returns the exit code (0, or 1 after printing why). */
    int run(Device device) {
        try {
            runOrFail(device);
        } catch (PingpongFailure f) {
            for (String line : f.lines()) {
                err.println(line);
            }
            if (data != null && data.completionFailed()) {
                printCounters();
            }
            err.flush();
            out.flush();
            closeQuietly();
            return 1;
        }
        try {
            close();
        } catch (PingpongFailure f) {
            f.lines().forEach(err::println);
            err.flush();
            closeQuietly();
            return 1;
        }
        return 0;
    }

    /**
     * Not in the C tools: after a failure, the port's non-zero counters (retransmissions, timeouts,
     * drops), so that a failed run says what the transport saw.
     */
    private void printCounters() {
        // Only after a failed work completion, where the transport's view explains it.
        if (ctx == null) {
            return;
        }
        err.println(PortCounters.line(ctx, s.ibPort()));
    }

    private void runOrFail(Device device) throws PingpongFailure {
        init(device);

        int routs = data.postRecv(s.rxDepth());
        if (routs < s.rxDepth()) {
            throw new PingpongFailure("Couldn't post receive (" + routs + ")");
        }
        if (s.events()) {
            waiter.requestNotify();
        }

        PortAttr port;
        try {
            port = ctx.queryPort(s.ibPort());
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't get port info", e);
        }
        Dest[] mine = localAddresses(port);
        for (Dest d : mine) {
            out.printf(Locale.ROOT, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n",
                    d.lid(), d.qpn(), d.psn(), t == Transport.UD ? ":" : ",", GidText.inetNtop(d.gid()));
        }
        out.flush();

        List<Dest> wire = new ArrayList<>(List.of(mine));
        if (t == Transport.SRQ) {
            wire.addAll(Collections.nCopies(MAX_QP - mine.length, Dest.NONE));
        }
        Exchange exchange = new Exchange(s.exchangeTimeoutMs(), t == Transport.SRQ);
        List<Dest> got = s.isClient()
                ? exchange.client(s.server(), s.port(), wire)
                : exchange.server(s.port(), wire, r -> connect(mine, r));
        for (Dest d : got.subList(0, mine.length)) {
            out.printf(Locale.ROOT, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
                    d.lid(), d.qpn(), d.psn(), GidText.inetNtop(d.gid()));
        }
        out.flush();
        waiter.peer(exchange.peer() + String.format(Locale.ROOT, " (QPN 0x%06x)", got.get(0).qpn()));
        if (s.isClient()) {
            connect(mine, got);
        }

        if (s.isClient()) {
            if (s.validate()) {
                for (int i = 0; i < s.size(); i += PAGE_SIZE) {
                    // the C tools store i / page_size % sizeof(char), which is always 0
                    buf.set(ValueLayout.JAVA_BYTE, payloadOffset + i, (byte) 0);
                }
            }
            data.sendFirst();
        }

        long timedFrom = data.run(routs, s.warmup());
        long end = System.nanoTime();

        // with --warmup the clock started when both counts passed it (timedFrom, set in the loop)
        int timed = s.iters() - s.warmup();
        float usec = (end - timedFrom) / 1000;
        long bytes = (long) s.size() * timed * 2;
        out.printf(Locale.ROOT, "%d bytes in %s seconds = %s Mbit/sec\n", bytes, c2f(usec / 1000000.),
                c2f(bytes * 8. / usec));
        out.printf(Locale.ROOT, "%d iters in %s seconds = %s usec/iter\n", timed, c2f(usec / 1000000.),
                c2f(usec / timed));
        if (!s.isClient() && s.validate()) {
            for (int i = 0; i < s.size(); i += PAGE_SIZE) {
                if (buf.get(ValueLayout.JAVA_BYTE, payloadOffset + i) != 0) {
                    out.printf(Locale.ROOT, "invalid data in page %d\n", i / PAGE_SIZE);
                }
            }
        }
        out.flush();
    }

    // ---------------------------------------------------------------------------------------------
    // Set-up: pp_init_ctx.

    private void init(Device device) throws PingpongFailure {
        try {
            ctx = device.open();
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't get context for " + device.name(), e);
        }
        if (t == Transport.UD) {
            PortAttr p;
            try {
                p = ctx.queryPort(s.ibPort());
            } catch (VerbsException e) {
                throw PingpongFailure.of("Unable to query port info for port " + s.ibPort(), e);
            }
            int mtu = p.activeMtu().bytes();
            if (s.size() > mtu) {
                throw new PingpongFailure("Requested size larger than port MTU (" + mtu + ")");
            }
        }
        if (s.events()) {
            try {
                channel = ctx.createCompletionChannel();
            } catch (VerbsException e) {
                throw PingpongFailure.of("Couldn't create completion channel", e);
            }
        }
        try {
            pd = ctx.allocPd();
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't allocate PD", e);
        }
        payloadOffset = t == Transport.UD ? GRH_BYTES : 0;
        long bufBytes = (long) s.size() + payloadOffset;
        try {
            arena = Arena.ofShared();
            buf = arena.allocate(bufBytes, PAGE_SIZE);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw PingpongFailure.of("Couldn't allocate work buf.", e);
        }
        // rc/uc/ud fill the buffer with 0x7b, srq with zeros
        buf.fill(t == Transport.SRQ ? (byte) 0 : (byte) 0x7b);
        try {
            mr = pd.regMr(buf, Access.LOCAL_WRITE);
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't register MR", e);
        }
        try {
            cq = ctx.createCq(s.rxDepth() + (t == Transport.SRQ ? s.numQp() : 1), channel, 0);
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't create CQ", e);
        }
        if (t == Transport.SRQ) {
            try {
                srq = pd.createSrq(new SrqAttr(s.rxDepth(), 1, 0));
            } catch (VerbsException e) {
                throw PingpongFailure.of("Couldn't create SRQ", e);
            }
        }
        QpType type = switch (t) {
            case RC, SRQ -> QpType.RC;
            case UC -> QpType.UC;
            case UD -> QpType.UD;
        };
        for (int i = 0; i < s.numQp(); i++) {
            QpInitAttr init = new QpInitAttr(type, cq, cq);
            if (srq != null) {
                init.srq(srq).cap(new QpCap(1, 0, 1, 0, 0));
            } else {
                init.cap(new QpCap(1, s.rxDepth(), 1, 1, 0));
            }
            QueuePair qp;
            try {
                qp = pd.createQp(init);
            } catch (VerbsException e) {
                throw PingpongFailure.of("Couldn't create QP" + qpLabel(i), e);
            }
            qps.add(qp);
            if (qp.cap().maxInlineData >= s.size()) {
                sendFlags |= SendFlag.INLINE;
            }
        }
        // pp_init_ctx's move to INIT is the guided path's prepare(): the same attributes and masks
        QueuePairBuilder builder = new QueuePairBuilder(pd, type, cq, cq).port(s.ibPort()).access(0).mtu(s.mtu())
                .qkey(UD_QKEY).hopLimit(t == Transport.UD ? 64 : 1).serviceLevel(s.sl()).maxRdAtomic(1)
                .maxDestRdAtomic(1).timeout(14).retryCnt(7).rnrRetry(7).minRnrTimer(12);
        if (s.gidIndex() >= 0) {
            builder.gidIndex(s.gidIndex());
        }
        for (int i = 0; i < qps.size(); i++) {
            try {
                prepared.add(builder.prepare(qps.get(i)));
            } catch (VerbsException e) {
                if (qps.get(i).state() == QpState.INIT) { // in INIT: reading the GID of -g failed
                    throw PingpongFailure.of(t == Transport.RC || t == Transport.UC
                            ? "can't read sgid of index " + s.gidIndex()
                            : "Could not get local gid for gid index " + s.gidIndex(), e);
                }
                throw PingpongFailure.of("Failed to modify QP" + qpLabel(i) + " to INIT", e);
            }
        }
        // a device outside this process (libibverbs: a NIC, the kernel's rxe) needs no CPU from this
        // JVM to make progress: spin on poll_cq as the C tools do
        waiter = new CompletionWait(cq, channel, !"soft".equals(device.provider()), s.stallTimeoutMs(), s.iters());
        recvWr.wrId(RECV_WRID).sge(buf.address(), s.size() + payloadOffset, mr.lkey());
        sendWr.wrId(SEND_WRID).send().flags(sendFlags)
                .sge(buf.address() + payloadOffset, s.size(), mr.lkey());
        data = new PingpongLoop(s, waiter, qps, srq, recvWr, sendWr);
    }

    /** "[i]" where ibv_srq_pingpong numbers its QPs in messages, "" elsewhere. */
    private String qpLabel(int i) {
        return t == Transport.SRQ ? "[" + i + "]" : "";
    }

    private Dest[] localAddresses(PortAttr port) throws PingpongFailure {
        int lid = port.lid();
        if (t != Transport.UD && port.linkLayer() != LinkLayer.ETHERNET && lid == 0) {
            throw new PingpongFailure("Couldn't get local LID");
        }
        Gid gid = Gid.ZERO;
        if (s.gidIndex() >= 0) {
            try {
                gid = ctx.queryGid(s.ibPort(), s.gidIndex());
            } catch (VerbsException e) {
                throw PingpongFailure.of(t == Transport.RC || t == Transport.UC
                        ? "can't read sgid of index " + s.gidIndex()
                        : "Could not get local gid for gid index " + s.gidIndex(), e);
            }
        }
        Dest[] mine = new Dest[qps.size()];
        for (int i = 0; i < mine.length; i++) {
            QpEndpoint e = prepared.get(i).endpoint();
            // without -g the C tools send no GID (and the LID of the port)
            mine[i] = new Dest(lid, e.qpn(), e.psn(), gid);
        }
        return mine;
    }

    // ---------------------------------------------------------------------------------------------
    // Connecting: pp_connect_ctx.

    private void connect(Dest[] mine, List<Dest> dest) throws PingpongFailure {
        if (t == Transport.UD) {
            connectUd(mine[0], dest.get(0));
            return;
        }
        for (int i = 0; i < qps.size(); i++) {
            // ibv_srq_pingpong routes every QP by the first remote GID
            connectConnected(i, mine[i], dest.get(i), dest.get(0));
        }
    }

    /** pp_connect_ctx through the guided path: the handshake takes the QP through RTR to RTS. */
    private void connectConnected(int i, Dest me, Dest dest, Dest route) throws PingpongFailure {
        // ibv_srq_pingpong routes every QP by the first remote GID; a GID without an interface ID
        // means no GRH to the C tools, which a GID of zero means to routeTo
        QpEndpoint remote = new QpEndpoint(qps.get(i).type(), dest.lid(), dest.qpn(), dest.psn(),
                route.hasInterfaceId() ? route.gid() : Gid.ZERO, s.mtu(), 0);
        handshake(i, remote);
    }

    private void connectUd(Dest me, Dest dest) throws PingpongFailure {
        QpEndpoint remote = new QpEndpoint(QpType.UD, dest.lid(), dest.qpn(), dest.psn(),
                dest.hasInterfaceId() ? dest.gid() : Gid.ZERO, s.mtu(), UD_QKEY);
        handshake(0, remote);
        AhAttr av = prepared.get(0).routeTo(remote);
        try {
            ah = pd.createAh(av);
        } catch (VerbsException e) {
            throw withGrhHint(PingpongFailure.of("Failed to create AH", e), e, av);
        }
        sendWr.ud(ah, dest.qpn(), UD_QKEY);
    }

    /** The handshake, failing with the C tools' message for the step that failed (RTR or RTS). */
    private void handshake(int i, QpEndpoint remote) throws PingpongFailure {
        try {
            prepared.get(i).handshake(remote);
        } catch (VerbsException e) {
            String step = qps.get(i).state() == QpState.RTR ? "RTS" : "RTR";
            throw withGrhHint(PingpongFailure.of("Failed to modify QP" + qpLabel(i) + " to " + step, e), e,
                    prepared.get(i).routeTo(remote));
        }
    }

    private PingpongFailure withGrhHint(PingpongFailure f, VerbsException e, AhAttr av) {
        if (e.errno() == Errno.EINVAL && av != null && !av.isGlobal()) {
            f.then("rdma4j: without -g there is no GRH, which RoCE needs: "
                    + "pass -g <gid index> on both sides (e.g. -g 1)");
        }
        return f;
    }

    /** printf's %.2f, with C's spelling of the non-finite values. */
    private static String c2f(double v) {
        if (Double.isNaN(v)) {
            return "-nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    // ---------------------------------------------------------------------------------------------
    // Tear-down: pp_close_ctx.

    private void close() throws PingpongFailure {
        if (waiter != null && waiter.events() > 0) {
            cq.ackEvents(waiter.events());
            waiter.acknowledged();
        }
        for (int i = 0; i < qps.size(); i++) {
            destroy(qps.get(i), "Couldn't destroy QP" + qpLabel(i));
        }
        qps.clear();
        destroy(srq, "Couldn't destroy SRQ");
        srq = null;
        destroy(cq, "Couldn't destroy CQ");
        cq = null;
        destroy(mr, "Couldn't deregister MR");
        mr = null;
        destroy(ah, "Couldn't destroy AH");
        ah = null;
        destroy(pd, "Couldn't deallocate PD");
        pd = null;
        destroy(channel, "Couldn't destroy completion channel");
        channel = null;
        destroy(ctx, "Couldn't release context");
        ctx = null;
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }

    private static void destroy(VerbsResource r, String message) throws PingpongFailure {
        if (r == null) {
            return;
        }
        try {
            r.close();
        } catch (VerbsException e) {
            throw PingpongFailure.of(message, e);
        }
    }

    /** After a failure: releases whatever exists, children first, ignoring further errors. */
    private void closeQuietly() {
        try {
            if (cq != null && waiter != null && waiter.events() > 0) {
                cq.ackEvents(waiter.events());
            }
        } catch (RuntimeException ignored) {
            // keep going
        }
        waiter = null;
        List<VerbsResource> order = new ArrayList<>(qps);
        order.add(srq);
        order.add(cq);
        order.add(mr);
        order.add(ah);
        order.add(pd);
        order.add(channel);
        order.add(ctx);
        boolean memoryReleased = true;
        for (VerbsResource r : order) {
            if (r != null) {
                try {
                    r.close();
                } catch (RuntimeException e) {
                    memoryReleased &= r != mr;
                }
            }
        }
        qps.clear();
        srq = null;
        cq = null;
        mr = null;
        ah = null;
        pd = null;
        channel = null;
        ctx = null;
        // never free memory a registration that could not be dropped may still point at
        if (arena != null && memoryReleased) {
            arena.close();
        }
        arena = null;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * The verbs resources of one side, laid out as perftest lays them out ({@code alloc_ctx},
 * {@code ctx_init}, {@code set_up_connection}, {@code ctx_connect}): one buffer of
 * {@code 2 * qps} areas of {@code max(size, cycle buffer)} bytes (send areas first, then receive
 * areas; the peer gets the address of this side's receive area), one MR over it, a send CQ and a
 * receive CQ, the QPs (and an SRQ with --use-srq, AHs for UD). Not thread safe.
 */
final class PerfResources implements AutoCloseable {
    final PerfParams p;
    Context ctx;
    PortAttr port;
    LinkLayer linkLayer;
    ProtectionDomain pd;
    CompletionChannel channel;
    Arena arena;
    MemorySegment buf;
    MemoryRegion mr;
    CompletionQueue sendCq;
    CompletionQueue recvCq;
    SharedReceiveQueue srq;
    QueuePair[] qps;
    AddressHandle[] ahs;
    /** Bytes between one QP's area and the next (perftest's BUFF_SIZE, cache-line aligned). */
    long area;
    /** The dests this side announces. */
    PerfDest[] mine;
    /** With -R: the connection manager's ids that own the QPs (closed first). */
    CmQps cm;
    /** False with -R: the context is the connection manager's (shared by its ids), not closed here. */
    private boolean ownsCtx = true;

    /** Where the inline choice tells what it disabled (perftest: the line on stdout, the words on stderr). */
    private final java.io.PrintWriter out;
    private final java.io.PrintWriter err;

    PerfResources(PerfParams p, java.io.PrintWriter out, java.io.PrintWriter err) {
        this.p = p;
        this.out = out;
        this.err = err;
    }

    /** Opens the context and reads the port: check_link. */
    void open(org.rdma4j.verbs.Device device) throws PerfFailure {
        try {
            ctx = device.open();
        } catch (VerbsException e) {
            throw PerfFailure.of(" Couldn't get context for the device", e);
        }
        query();
    }

    /** With -R: the device and port the connection manager chose for the address (cm_id->verbs). */
    void open(Context cmContext, int portNum) throws PerfFailure {
        ctx = cmContext;
        ownsCtx = false;
        p.ibPort = portNum;
        query();
    }

    private void query() throws PerfFailure {
        try {
            port = ctx.queryPort(p.ibPort);
        } catch (VerbsException e) {
            throw PerfFailure.of(" Unable to query port " + p.ibPort + " attributes", e);
        }
        linkLayer = port.linkLayer();
        if (linkLayer == LinkLayer.ETHERNET && p.gidIndex == -1) {
            p.gidIndex = 0;
        }
        chooseInline(deviceKind());
        if (p.verb() == Verb.READ || p.verb() == Verb.ATOMIC) {
            p.inlineSize = 0;
            int max = ctx.queryDevice().maxQpRdAtom();
            if (p.outReads > max) {
                System.err.print(Tables.RESULT_LINE);
                System.err.printf(" Number of outstanding reads is above max = %d%n Changing to that max value%n", max);
                p.outReads = max;
            } else if (p.outReads <= 0) {
                p.outReads = max;
            }
        } else {
            p.outReads = 1;
        }
    }

    /** ib_dev_name: the device's family from its vendor and part IDs; UNKNOWN when the query fails. */
    private DeviceKind deviceKind() {
        try {
            DeviceAttr attr = ctx.queryDevice();
            return DeviceKind.of(attr.vendorId(), attr.vendorPartId());
        } catch (VerbsException e) {
            return DeviceKind.UNKNOWN;
        }
    }

    /**
     * ctx_set_max_inline: no inline data on a device perftest does not know (saying so when the size was
     * set: -I, or READ/ATOMIC's 0); on a known one, a latency test without -I gets the device's default.
     */
    void chooseInline(DeviceKind kind) {
        if (kind == DeviceKind.UNKNOWN) {
            if (p.inlineSize != -1) {
                out.print(Tables.RESULT_LINE);
                out.flush();
                err.println("Device not recognized to implement inline feature. Disabling it");
                err.flush();
            }
            p.inlineSize = 0;
        } else if (p.inlineSize == -1) {
            p.inlineSize = p.isBw() ? 0 : kind.latencyInline(p.verb(), p.connection);
        }
    }

    /** set_mtu: the -m value (at most the port's active MTU), or the active MTU; an ibv_mtu value. */
    int localMtu(java.io.PrintWriter out) {
        int active = port.activeMtu().value();
        if (p.mtu == 0) {
            return active;
        }
        int m = Mtu.ofBytes(p.mtu).value();
        if (m > active) {
            out.printf("Requested mtu is higher than active mtu \nChanging to active mtu - %d\n", active);
            return active;
        }
        return m;
    }

    /** alloc_ctx + ctx_init: buffer, MR, CQs, QPs in INIT. */
    void create() throws PerfFailure {
        long size = p.all ? PerfParams.MAX_SIZE : p.size;
        long buffSize = size < p.cycleBuffer ? p.cycleBuffer : size;
        area = PerfParams.inc(buffSize, p.cacheLine);
        long total = area * 2 * p.numQps + (p.connection == Connection.UD ? p.cacheLine : 0);
        try {
            arena = Arena.ofShared();
            buf = arena.allocate(total, 4096);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw PerfFailure.of("Couldn't allocate work buf.", e);
        }
        // the send areas carry a pattern (so a receiver can tell data arrived), the receive areas zeros
        for (long off = 0; off < area * p.numQps; off++) {
            buf.set(java.lang.foreign.ValueLayout.JAVA_BYTE, off, pattern(off % area));
        }
        try {
            pd = ctx.allocPd();
        } catch (VerbsException e) {
            throw PerfFailure.of(" Couldn't allocate PD", e);
        }
        try {
            mr = pd.regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ
                    | (p.verb() == Verb.ATOMIC ? Access.REMOTE_ATOMIC : 0));
        } catch (VerbsException e) {
            throw PerfFailure.of(" Couldn't allocate MR", e);
        }
        try {
            if (p.useEvent) {
                channel = ctx.createCompletionChannel();
            }
            sendCq = ctx.createCq(Math.max(1, p.txDepth * p.numQps), channel, 0);
            recvCq = p.verb() == Verb.SEND ? ctx.createCq(Math.max(1, p.rxDepth * p.numQps), channel, 0) : sendCq;
        } catch (VerbsException e) {
            throw PerfFailure.of(" Couldn't create CQ", e);
        }
        if (p.useSrq) {
            try {
                srq = pd.createSrq(new SrqAttr(p.rxDepth, 1, 0));
            } catch (VerbsException e) {
                throw PerfFailure.of("Couldn't create SRQ", e);
            }
        }
        qps = new QueuePair[p.numQps];
        ahs = new AddressHandle[p.numQps];
        if (p.rdmaCm) {
            return; // created on the connection manager's ids as they connect (createCmQp)
        }
        for (int i = 0; i < p.numQps; i++) {
            qps[i] = createQp(null);
            toInit(qps[i]);
        }
    }

    /** With -R: QP {@code i} on {@code id} (rdma_create_qp: the connection manager moves it to INIT). */
    void createCmQp(int i, org.rdma4j.cm.CmId id) throws PerfFailure {
        qps[i] = createQp(id);
    }

    /** With -R: QP {@code i} was destroyed with its id (a connection attempt starts over). */
    void forgetCmQp(int i) {
        if (qps != null && i < qps.length) {
            qps[i] = null;
        }
    }

    private QueuePair make(org.rdma4j.cm.CmId id, QpInitAttr init) {
        return id != null ? id.createQp(pd, init) : pd.createQp(init);
    }

    private QueuePair createQp(org.rdma4j.cm.CmId id) throws PerfFailure {
        int recv = p.verb() == Verb.SEND && srq == null ? Math.max(1, p.rxDepth) : 1;
        QpInitAttr init = new QpInitAttr(p.connection.qpType(), sendCq, recvCq);
        init.cap(new QpCap(Math.max(1, p.txDepth), recv, 1, 1, p.inlineSize));
        if (srq != null) {
            init.srq(srq);
        }
        try {
            return make(id, init);
        } catch (VerbsException e) {
            if (p.inlineSize > 0) {
                // a known device that inlines less than perftest's default: go on without inline data
                // (perftest itself would fail here)
                p.inlineSize = 0;
                init.cap(new QpCap(Math.max(1, p.txDepth), recv, 1, 1, 0));
                try {
                    return make(id, init);
                } catch (VerbsException e2) {
                    throw PerfFailure.of("Couldn't create QP", e2);
                }
            }
            throw PerfFailure.of("Couldn't create QP", e);
        }
    }

    /** ctx_modify_qp_to_init: access flags by verb; a Q_Key for UD. */
    private void toInit(QueuePair qp) throws PerfFailure {
        QpAttr a = new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(p.ibPort);
        if (p.connection == Connection.UD) {
            a.qkey(PerfParams.QKEY);
        } else {
            a.accessFlags(switch (p.verb()) {
                case ATOMIC -> Access.REMOTE_ATOMIC;
                case READ -> Access.REMOTE_READ;
                case WRITE -> Access.REMOTE_WRITE;
                case SEND -> Access.REMOTE_WRITE | Access.LOCAL_WRITE;
            });
        }
        try {
            qp.modify(a);
        } catch (VerbsException e) {
            throw PerfFailure.of("Failed to modify QP to INIT, ret=" + e.errno(), e);
        }
    }

    /** The byte at {@code offset} of every send area before the run. */
    static byte pattern(long offset) {
        return (byte) (0x5a ^ (offset * 31));
    }

    /** The receive area of QP {@code i} (where the peer's writes land). */
    long recvAddress(int i) {
        return mr.address() + (p.numQps + i) * area;
    }

    /** The send area of QP {@code i}. */
    long sendAddress(int i) {
        return mr.address() + i * area;
    }

    /** set_up_connection: picks the GID (get_best_gid_index unless -x), builds this side's dests. */
    PerfDest[] setUpConnection() throws PerfFailure {
        Gid gid = Gid.ZERO;
        if (p.gidIndex != -1) {
            if (!p.gidGiven) {
                p.gidIndex = bestGidIndex();
            }
            try {
                gid = ctx.queryGid(p.ibPort, p.gidIndex);
            } catch (VerbsException e) {
                throw PerfFailure.of(" Unable to set up socket connection", e);
            }
        }
        mine = new PerfDest[p.numQps];
        for (int i = 0; i < p.numQps; i++) {
            int psn = ThreadLocalRandom.current().nextInt(1 << 24);
            mine[i] = new PerfDest(port.lid(), p.outReads, qps[i].qpn(), psn, mr.rkey(), recvAddress(i), gid, 0);
        }
        return mine;
    }

    /**
     * get_best_gid_index: starting from index 0, a later entry wins when it is IPv4-mapped and the
     * current one is not (IPv6 with --ipv6), or when the kinds match and it is RoCE v2 over v1.
     */
    int bestGidIndex() {
        int best = 0;
        int len = port.gidTblLen();
        for (int i = 1; i < len; i++) {
            GidEntry cur;
            GidEntry rival;
            try {
                cur = ctx.queryGidEntry(p.ibPort, best);
                rival = ctx.queryGidEntry(p.ibPort, i);
            } catch (VerbsException e) {
                continue;
            }
            if (rival.gid().isZero()) {
                continue;
            }
            boolean v4 = cur.gid().isIpv4Mapped();
            boolean v4Rival = rival.gid().isIpv4Mapped();
            if (v4Rival && !v4 && !p.ipv6) {
                best = i;
            } else if (!v4Rival && v4 && p.ipv6) {
                best = i;
            } else if (v4Rival == v4 && rank(rival.type()) > rank(cur.type())) {
                best = i;
            }
        }
        return best;
    }

    private static int rank(GidEntry.GidType t) {
        return switch (t) {
            case ROCE_V2 -> 2;
            case ROCE_V1 -> 1;
            default -> 0;
        };
    }

    /** True when the key messages carry GIDs (perftest: a GID index is in use). */
    boolean withGid() {
        return p.gidIndex != -1;
    }

    /**
     * ctx_connect: RTR for every QP; RTS where this side sends (latency tests, the client, -b); an AH
     * for UD senders.
     */
    void connect(PerfDest[] remote) throws PerfFailure {
        Mtu pathMtu = Mtu.ofValue(p.currMtu);
        for (int i = 0; i < p.numQps; i++) {
            PerfDest d = remote[i];
            GlobalRoute grh = p.gidIndex == -1 ? null : new GlobalRoute(d.gid(), 0, p.gidIndex, 0xff, p.trafficClass);
            AhAttr ah = new AhAttr(grh, d.lid(), p.sl, 0, 0, p.ibPort);
            QpAttr rtr = new QpAttr().state(QpState.RTR);
            if (p.connection != Connection.UD) {
                rtr.ahAttr(ah).pathMtu(pathMtu).destQpNum(d.qpn()).rqPsn(d.psn());
                if (p.connection == Connection.RC) {
                    rtr.maxDestRdAtomic(mine[i].outReads()).minRnrTimer(PerfParams.MIN_RNR_TIMER);
                }
            }
            try {
                qps[i].modify(rtr);
            } catch (VerbsException e) {
                throw PerfFailure.of(String.format("Failed to modify QP %d to RTR", qps[i].qpn()), e);
            }
            boolean sends = !p.isBw() || p.isClient() || p.duplex;
            if (sends) {
                QpAttr rts = new QpAttr().state(QpState.RTS).sqPsn(mine[i].psn());
                if (p.connection == Connection.RC) {
                    rts.timeout(p.qpTimeout).retryCnt(7).rnrRetry(7).maxRdAtomic(d.outReads());
                }
                try {
                    qps[i].modify(rts);
                } catch (VerbsException e) {
                    throw PerfFailure.of("Failed to modify QP to RTS", e);
                }
                if (p.connection == Connection.UD) {
                    try {
                        ahs[i] = pd.createAh(ah);
                    } catch (VerbsException e) {
                        throw PerfFailure.of("Failed to create AH", e);
                    }
                }
            }
        }
    }

    @Override
    public void close() {
        CmQps ids = cm;
        cm = null;
        if (ids != null) {
            ids.destroyQps(); // the QPs are the ids'; the ids go after the rest
            qps = null;
        }
        List<VerbsResource> order = new ArrayList<>();
        if (qps != null) {
            for (QueuePair q : qps) {
                order.add(q);
            }
        }
        order.add(srq);
        if (ahs != null) {
            for (AddressHandle a : ahs) {
                order.add(a);
            }
        }
        order.add(mr);
        if (recvCq != sendCq) {
            order.add(recvCq);
        }
        order.add(sendCq);
        order.add(pd);
        order.add(channel);
        if (ownsCtx) {
            order.add(ctx);
        }
        boolean memoryFree = true;
        for (VerbsResource r : order) {
            if (r != null) {
                try {
                    r.close();
                } catch (RuntimeException e) {
                    memoryFree &= r != mr;
                }
            }
        }
        if (arena != null && memoryFree) {
            arena.close();
        }
        arena = null;
        if (ids != null) {
            ids.close();
        }
        if (closeAfter != null) {
            closeAfter.close();
            closeAfter = null;
        }
    }

    /** With -R and kept resources: the exchange's channel, whose id holds the shared context, closed last. */
    Comm closeAfter;
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.tools.device.GidText;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * One run of {@code rdma4j mcast recv} or {@code send} (see {@link McastCommand}); the same steps, checks
 * and output lines as {@code interop/mcast/ud_mcast.c}. Failures print a line starting "rdma4j mcast:"
 * on stderr and give exit code 1. Not thread safe: one run on the calling thread.
 */
final class McastRun {
    static final int GRH = 40;
    static final int MCAST_QPN = 0xFFFFFF;
    private static final long SEND_ID = -1L;
    /** Multicast stays on the local link; answers go anywhere. */
    private static final int GROUP_HOP_LIMIT = 1;
    private static final int UNICAST_HOP_LIMIT = 64;
    private static final long SEND_WAIT_NS = 5_000_000_000L;

    private final boolean receiver;
    private final int ibPort;
    private final int gidIndex;
    private final Gid group;
    private final int qkey;
    private final int iters;
    private final int size;
    private final int qpCount;
    private final boolean reply;
    private final int receivers;
    private final int timeoutS;
    private final PrintWriter out;
    private final PrintWriter err;

    private Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private Arena arena;
    private MemorySegment buf;
    private MemoryRegion mr;
    private final List<QueuePair> qps = new ArrayList<>();
    private final List<QueuePair> attached = new ArrayList<>();
    private final List<AddressHandle> ahs = new ArrayList<>();
    private Gid sgid;
    private int depth;
    private int slotSize;
    private long sendArea;
    private final RecvWorkRequest recvWr = new RecvWorkRequest();
    private final SendWorkRequest sendWr = new SendWorkRequest();
    private final WorkCompletion[] wc = WorkCompletion.array(1);
    /** Receive completions that came while a send completion was awaited. */
    private final ArrayDeque<WorkCompletion> held = new ArrayDeque<>();

    /**
     * recv: a sender (GID, QPN) as seen by one receiving QP; send: a replier (GID, QPN). The sequence
     * numbers seen from it.
     */
    private static final class Peer {
        final boolean[] seen;
        int count;
        AddressHandle ah;

        Peer(int iters) {
            seen = new boolean[iters];
        }
    }

    private final Map<String, Peer> peers = new LinkedHashMap<>();
    private final Map<Gid, AddressHandle> replyAhs = new HashMap<>();
    private int received;
    private int bad;
    private int[] perQp;

    McastRun(boolean receiver, int ibPort, int gidIndex, Gid group, int qkey, int iters, int size, int qps,
             boolean reply, int receivers, int timeoutS, PrintWriter out, PrintWriter err) {
        this.receiver = receiver;
        this.ibPort = ibPort;
        this.gidIndex = gidIndex;
        this.group = group;
        this.qkey = qkey;
        this.iters = iters;
        this.size = size;
        this.qpCount = receiver ? qps : 1;
        this.reply = reply;
        this.receivers = receivers;
        this.timeoutS = timeoutS;
        this.out = out;
        this.err = err;
    }

    /** A run that stopped: the message for stderr. */
    private static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message, null, false, false);
        }

        static Failure of(String what, VerbsException e) {
            return new Failure(what + ": " + e.getMessage());
        }
    }

    int run(Device device) {
        int code;
        try {
            setUp(device);
            code = receiver ? receive() : send();
        } catch (Failure f) {
            out.flush();
            err.println("rdma4j mcast: " + f.getMessage());
            code = 1;
        } catch (VerbsException e) {
            out.flush();
            err.println("rdma4j mcast: " + e.getMessage());
            code = 1;
        } finally {
            out.flush();
            tearDown();
            err.flush();
        }
        return code;
    }

    // ---------------------------------------------------------------------------------------------

    private void setUp(Device device) throws Failure {
        try {
            ctx = device.open();
        } catch (VerbsException e) {
            throw Failure.of("cannot open " + device.name(), e);
        }
        int mtu;
        try {
            mtu = ctx.queryPort(ibPort).activeMtu().bytes();
            sgid = ctx.queryGid(ibPort, gidIndex);
        } catch (VerbsException e) {
            throw Failure.of("cannot read port " + ibPort + " / GID index " + gidIndex + " of " + device.name(), e);
        }
        if (size > mtu) {
            throw new Failure("-s " + size + " is larger than the port's active MTU (" + mtu + "): a UD message is "
                    + "one packet");
        }
        if (sgid.isZero()) {
            throw new Failure("GID index " + gidIndex + " of " + device.name() + " is empty");
        }
        if (sgid.isIpv4Mapped() != group.isIpv4Mapped()) {
            throw new Failure("the group " + GidText.inetNtop(group) + " and GID index " + gidIndex + " ("
                    + GidText.inetNtop(sgid) + ") are not of the same IP version");
        }
        // recv: one receive per datagram up to 256 per QP, reposted as they are handled; send: one per
        // expected answer up to 1024 (answers from every receiver can arrive while it is still sending)
        depth = receiver ? Math.min(iters, 256) : reply ? (int) Math.min((long) iters * receivers, 1024) : 1;
        slotSize = (GRH + size + 63) & ~63;
        long bytes = (long) qpCount * depth * slotSize + slotSize;
        arena = Arena.ofShared();
        buf = arena.allocate(bytes, 4096);
        sendArea = buf.address() + (long) qpCount * depth * slotSize;
        try {
            pd = ctx.allocPd();
            cq = ctx.createCq(qpCount * depth + 16);
            mr = pd.regMr(buf, Access.LOCAL_WRITE);
        } catch (VerbsException e) {
            throw Failure.of("cannot set up PD, CQ and MR", e);
        }
        for (int q = 0; q < qpCount; q++) {
            QueuePair qp;
            try {
                qp = pd.createQp(new QpInitAttr(QpType.UD, cq, cq).cap(new QpCap(16, depth, 1, 1, 0)));
            } catch (VerbsException e) {
                throw Failure.of("cannot create a UD QP", e);
            }
            qps.add(qp);
            try {
                new QueuePairBuilder(pd, QpType.UD, cq, cq).port(ibPort).qkey(qkey).psn(0).prepare(qp).handshake();
            } catch (VerbsException e) {
                throw Failure.of("cannot bring the UD QP to RTS", e);
            }
        }
    }

    /** Releases everything, attachments first; false if something could not be released. */
    private boolean tearDown() {
        boolean ok = true;
        for (QueuePair qp : attached) {
            try {
                qp.detachMcast(group, 0);
            } catch (VerbsException e) {
                ok = false;
            }
        }
        attached.clear();
        List<VerbsResource> order = new ArrayList<>(qps);
        order.addAll(ahs);
        order.add(mr);
        order.add(cq);
        order.add(pd);
        order.add(ctx);
        for (VerbsResource r : order) {
            if (r != null) {
                try {
                    r.close();
                } catch (VerbsException e) {
                    ok = false;
                }
            }
        }
        qps.clear();
        ahs.clear();
        if (arena != null && ok) {
            arena.close();
        }
        return ok;
    }

    // ---------------------------------------------------------------------------------------------

    private int receive() throws Failure {
        perQp = new int[qpCount];
        for (int q = 0; q < qpCount; q++) {
            for (int i = 0; i < depth; i++) {
                postRecv(q, i);
            }
            try {
                qps.get(q).attachMcast(group, 0);
            } catch (VerbsException e) {
                throw Failure.of("cannot attach QP " + hex(qps.get(q).qpn()) + " to " + GidText.inetNtop(group), e);
            }
            attached.add(qps.get(q));
        }
        for (QueuePair qp : qps) {
            out.printf(Locale.ROOT, "rdma4j mcast: QP %s attached to %s%n", hex(qp.qpn()), GidText.inetNtop(group));
        }
        out.printf(Locale.ROOT, "rdma4j mcast: waiting for %d datagrams on each of %d QP(s), GID %s%n", iters,
                qpCount, GidText.inetNtop(sgid));
        out.flush();
        long deadline = System.nanoTime() + timeoutS * 1_000_000_000L;
        boolean timedOut = false;
        while (received < (long) iters * qpCount) {
            WorkCompletion w = next(deadline);
            if (w == null) {
                timedOut = true;
                break;
            }
            if (w.wrId() == SEND_ID) {
                throw new Failure("unexpected send completion");
            }
            onDatagram(w);
        }
        boolean ok = !timedOut && bad == 0;
        if (timedOut) {
            err.printf(Locale.ROOT, "rdma4j mcast: timeout after %d s%n", timeoutS);
        }
        for (int q = 0; q < qpCount; q++) {
            if (perQp[q] != iters) {
                err.printf(Locale.ROOT, "rdma4j mcast: QP %s received %d of %d%n", hex(qps.get(q).qpn()), perQp[q],
                        iters);
                ok = false;
            }
        }
        out.printf(Locale.ROOT, "mcast recv: qps=%d received=%d bad=%d replies=%d%n", qpCount, received, bad,
                reply ? received : 0);
        return ok ? 0 : 1;
    }

    private void onDatagram(WorkCompletion w) throws Failure {
        int q = (int) (w.wrId() >>> 32);
        int slot = (int) w.wrId();
        MemorySegment p = slot(q, slot);
        Gid[] addresses = grhAddresses(w, p);
        Gid src = addresses != null ? addresses[0] : Gid.ZERO;
        Gid dst = addresses != null ? addresses[1] : Gid.ZERO;
        int seq = w.byteLen() == GRH + size ? check(p.asSlice(GRH, size)) : -1;
        boolean ok = addresses != null && dst.equals(group) && seq >= 0;
        Peer from = null;
        if (ok) {
            // each attached QP gets its own copy: duplicates are per receiving QP
            from = peers.computeIfAbsent(q + "/" + src.toHex() + "/" + w.srcQp(), k -> new Peer(iters));
            ok = !from.seen[seq];
        }
        if (ok) {
            from.seen[seq] = true;
            from.count++;
            perQp[q]++;
            received++;
        } else {
            bad++;
        }
        out.printf(Locale.ROOT, "recv qp %s seq %d from %s qpn %s to %s len %d %s%n", hex(qps.get(q).qpn()), seq,
                GidText.inetNtop(src), hex(w.srcQp()), GidText.inetNtop(dst), w.byteLen(), ok ? "ok" : "BAD");
        out.flush();
        if (ok && reply) {
            AddressHandle ah = replyAhs.get(src);
            if (ah == null) {
                // ibv_init_ah_from_wc (AhAttr.fromWc) refuses a datagram sent to a group: there is no local
                // GID it was sent to. Answer from our own GID index to the sender's GID instead.
                try {
                    ah = pd.createAh(new AhAttr(new GlobalRoute(src, 0, gidIndex, UNICAST_HOP_LIMIT, 0), 0, 0, 0, 0,
                            ibPort));
                } catch (VerbsException e) {
                    throw Failure.of("cannot create an AH to " + GidText.inetNtop(src), e);
                }
                ahs.add(ah);
                replyAhs.put(src, ah);
            }
            sendAndWait(qps.get(q), ah, w.srcQp(), p.asSlice(GRH, size));
        }
        postRecv(q, slot);
    }

    // ---------------------------------------------------------------------------------------------

    private int send() throws Failure {
        if (reply) {
            for (int i = 0; i < depth; i++) {
                postRecv(0, i);
            }
        }
        AddressHandle ah;
        try {
            ah = pd.createAh(new AhAttr(new GlobalRoute(group, 0, gidIndex, GROUP_HOP_LIMIT, 0), 0, 0, 0, 0, ibPort));
        } catch (VerbsException e) {
            throw Failure.of("cannot create an AH to the group " + GidText.inetNtop(group), e);
        }
        ahs.add(ah);
        out.printf(Locale.ROOT, "rdma4j mcast: sending %d datagrams of %d bytes to %s from QP %s, GID %s%n", iters,
                size, GidText.inetNtop(group), hex(qps.get(0).qpn()), GidText.inetNtop(sgid));
        out.flush();
        MemorySegment payload = arena.allocate(size);
        for (int i = 0; i < iters; i++) {
            fill(payload, i);
            sendAndWait(qps.get(0), ah, MCAST_QPN, payload);
        }
        boolean ok = true;
        if (reply) {
            long deadline = System.nanoTime() + timeoutS * 1_000_000_000L;
            while (completeRepliers() < receivers) {
                WorkCompletion w = next(deadline);
                if (w == null) {
                    err.printf(Locale.ROOT, "rdma4j mcast: timeout after %d s: %d of %d receivers answered every "
                            + "datagram%n", timeoutS, completeRepliers(), receivers);
                    ok = false;
                    break;
                }
                onReply(w);
            }
            for (Map.Entry<String, Peer> e : peers.entrySet()) {
                String[] k = e.getKey().split("/");
                out.printf(Locale.ROOT, "rdma4j mcast: %s QPN %s answered %d of %d%n",
                        GidText.inetNtop(Gid.parse(k[0])), hex(Integer.parseInt(k[1])), e.getValue().count, iters);
            }
        }
        out.printf(Locale.ROOT, "mcast send: sent=%d replies=%d repliers=%d bad=%d%n", iters, received, peers.size(),
                bad);
        return ok && bad == 0 ? 0 : 1;
    }

    private void onReply(WorkCompletion w) throws Failure {
        if (w.wrId() == SEND_ID) {
            throw new Failure("unexpected send completion");
        }
        int slot = (int) w.wrId();
        MemorySegment p = slot(0, slot);
        Gid src = Gid.ZERO;
        String problem = null;
        Gid[] addresses = grhAddresses(w, p);
        try {
            // A unicast answer: the address to answer it with is what ibv_init_ah_from_wc gives.
            AhAttr back = AhAttr.fromWc(ctx, ibPort, w, p.asSlice(0, GRH));
            if (back.grh() == null) {
                problem = "no GRH";
            } else {
                src = back.grh().dgid();
                if (back.grh().sgidIndex() != gidIndex
                        && !ctx.queryGid(ibPort, back.grh().sgidIndex()).equals(sgid)) {
                    problem = "sent to GID index " + back.grh().sgidIndex();
                }
            }
        } catch (VerbsException e) {
            problem = "AhAttr.fromWc: " + e.getMessage();
        }
        if (addresses != null && !addresses[0].equals(src)) {
            problem = "GRH source " + GidText.inetNtop(addresses[0]) + " but fromWc says " + GidText.inetNtop(src);
        }
        int seq = w.byteLen() == GRH + size ? check(p.asSlice(GRH, size)) : -1;
        boolean ok = problem == null && seq >= 0;
        if (ok) {
            Peer from = peers.computeIfAbsent(src.toHex() + "/" + w.srcQp(), k -> new Peer(iters));
            ok = !from.seen[seq];
            if (ok) {
                from.seen[seq] = true;
                from.count++;
                received++;
            }
        }
        if (!ok) {
            bad++;
        }
        out.printf(Locale.ROOT, "reply seq %d from %s qpn %s len %d %s%s%n", seq, GidText.inetNtop(src),
                hex(w.srcQp()), w.byteLen(), ok ? "ok" : "BAD", problem != null ? " (" + problem + ")" : "");
        out.flush();
        postRecv(0, slot);
    }

    private int completeRepliers() {
        int n = 0;
        for (Peer p : peers.values()) {
            if (p.count == iters) {
                n++;
            }
        }
        return n;
    }

    // ---------------------------------------------------------------------------------------------

    private MemorySegment slot(int q, int slot) {
        return buf.asSlice(((long) q * depth + slot) * slotSize, slotSize);
    }

    private void postRecv(int q, int slot) throws Failure {
        recvWr.clear().wrId((long) q << 32 | slot).sge(slot(q, slot).address(), GRH + size, mr.lkey());
        try {
            qps.get(q).postRecv(recvWr);
        } catch (VerbsException e) {
            throw Failure.of("cannot post a receive", e);
        }
    }

    /**
     * Sends {@code payload} and waits for the send's completion. Receives that complete meanwhile are held
     * for later (recv, which answers them) or handled at once (send: answers).
     */
    private void sendAndWait(QueuePair qp, AddressHandle ah, int dqpn, MemorySegment payload) throws Failure {
        MemorySegment.copy(payload, 0, buf, sendArea - buf.address(), size);
        sendWr.clear().wrId(SEND_ID).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED).sge(sendArea, size, mr.lkey())
                .ud(ah, dqpn, qkey);
        try {
            qp.postSend(sendWr);
        } catch (VerbsException e) {
            throw Failure.of("cannot post a send", e);
        }
        long deadline = System.nanoTime() + SEND_WAIT_NS;
        for (;;) {
            WorkCompletion w = poll(deadline);
            if (w == null) {
                throw new Failure("no completion for a send within " + SEND_WAIT_NS / 1_000_000_000L + " s");
            }
            if (w.wrId() == SEND_ID) {
                if (w.opcode() != WcOpcode.SEND) {
                    throw new Failure("a send completed as " + w.opcode());
                }
                return;
            }
            if (receiver) {
                held.add(w); // handled (and answered) after this send
            } else {
                onReply(w); // counted and reposted at once: answers may come faster than we send
            }
        }
    }

    /** The next completion, held ones first; null at the deadline. Failed completions end the run. */
    private WorkCompletion next(long deadline) throws Failure {
        WorkCompletion w = held.poll();
        return w != null ? w : poll(deadline);
    }

    private WorkCompletion poll(long deadline) throws Failure {
        int idle = 0;
        for (;;) {
            int n;
            try {
                n = cq.poll(wc);
            } catch (VerbsException e) {
                throw Failure.of("polling the CQ failed", e);
            }
            if (n == 1) {
                WorkCompletion w = new WorkCompletion();
                w.copyFrom(wc[0]);
                if (!w.isSuccess()) {
                    throw new Failure(String.format(Locale.ROOT, "a %s completed with status %s (%d)",
                            w.wrId() == SEND_ID ? "send" : "receive", w.status().description(), w.status().value()));
                }
                return w;
            }
            if (System.nanoTime() - deadline > 0) {
                return null;
            }
            if (++idle < 100) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(50_000);
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new Failure("interrupted");
            }
        }
    }

    /**
     * Source and destination GID from the 40-byte GRH area: with an IPv4 network header the IPv4 header
     * sits in its last 20 bytes; an IPv6 header and an IB GRH have the addresses at 8 and 24. Null
     * without a GRH.
     */
    static Gid[] grhAddresses(WorkCompletion w, MemorySegment grh) {
        if ((w.wcFlags() & WcFlag.GRH) == 0) {
            return null;
        }
        byte[] src = new byte[16];
        byte[] dst = new byte[16];
        if (w.networkHdrType() == NetworkHeaderType.IPV4) {
            src[10] = src[11] = dst[10] = dst[11] = (byte) 0xFF;
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 20 + 12, src, 12, 4);
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 20 + 16, dst, 12, 4);
        } else {
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 8, src, 0, 16);
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 24, dst, 0, 16);
        }
        return new Gid[] {Gid.of(src), Gid.of(dst)};
    }

    /** The payload of datagram {@code seq}: seq big-endian, then byte i = (seq + i) & 0xff. */
    static void fill(MemorySegment p, int seq) {
        p.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0, seq);
        for (int i = 4; i < p.byteSize(); i++) {
            p.set(ValueLayout.JAVA_BYTE, i, (byte) (seq + i));
        }
    }

    /** The sequence number of an intact payload below -n, else -1. */
    private int check(MemorySegment p) {
        int seq = p.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0);
        if (seq < 0 || seq >= iters) {
            return -1;
        }
        for (int i = 4; i < p.byteSize(); i++) {
            if (p.get(ValueLayout.JAVA_BYTE, i) != (byte) (seq + i)) {
                return -1;
            }
        }
        return seq;
    }

    private static String hex(int qpn) {
        return String.format(Locale.ROOT, "0x%06x", qpn);
    }
}

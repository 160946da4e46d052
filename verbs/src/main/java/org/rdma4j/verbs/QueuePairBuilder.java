// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The guided way from a protection domain to a queue pair in RTS, in the spirit of rust-ibverbs'
 * {@code QueuePairBuilder} and pyverbs' {@code to_rts}: {@link #prepare()} creates the QP and moves it
 * to INIT ({@link PreparedQueuePair}); the peers exchange {@link PreparedQueuePair#endpoint()} out of
 * band; {@link PreparedQueuePair#handshake(QpEndpoint)} moves it through RTR to RTS. The attribute
 * masks of every step come from the IBTA state table ({@link org.rdma4j.verbs.spi.QpTransitions}),
 * never from the caller. Every setting has a default that makes a fast working pair; change only
 * what you care about. Mutable, fluent; not thread safe; one builder may prepare many QPs.
 * {@snippet :
 * try (PreparedQueuePair a = pd.queuePair(QpType.RC, cq).prepare();
 *      PreparedQueuePair b = pd.queuePair(QpType.RC, cq).prepare()) {
 *     QueuePair qa = a.handshake(b.endpoint());
 *     QueuePair qb = b.handshake(a.endpoint());
 * }
 * }
 */
public final class QueuePairBuilder {
    /** The Q_Key UD QPs get unless told otherwise (the one ibv_ud_pingpong uses). */
    public static final int DEFAULT_QKEY = 0x11111111;

    private final ProtectionDomain pd;
    private final QpType type;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private SharedReceiveQueue srq;
    private QpCap cap = new QpCap(16, 16, 1, 1, 0);
    private boolean sqSigAll;
    private int access = -1;
    private Mtu mtu;
    private int timeout = 14;
    private int retryCnt = 7;
    private int rnrRetry = 7;
    private int minRnrTimer = 12;
    private int maxRdAtomic = -1;
    private int maxDestRdAtomic = -1;
    private int psn = -1;
    private int port = 1;
    private int gidIndex = -1;
    private int pkeyIndex;
    private int qkey = DEFAULT_QKEY;
    private int hopLimit = 64;
    private int trafficClass;
    private int serviceLevel;

    /**
     * A builder for a QP of {@code type} in {@code pd}; see {@link ProtectionDomain#queuePair}.
     *
     * @param pd     the protection domain
     * @param type   the QP type
     * @param sendCq the CQ send completions go to
     * @param recvCq the CQ receive completions go to
     * @throws IllegalArgumentException if any of them is null
     */
    public QueuePairBuilder(ProtectionDomain pd, QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        if (pd == null || type == null || sendCq == null || recvCq == null) {
            throw new IllegalArgumentException("pd, type and both CQs are required");
        }
        this.pd = pd;
        this.type = type;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
    }

    /** {@return the protection domain the QPs are created in} */
    public ProtectionDomain pd() { return pd; }
    /** {@return the type of the QPs} */
    public QpType type() { return type; }

    /**
     * The CQ send completions go to ({@code send_cq}).
     *
     * @param cq the CQ, of the PD's context
     * @return this builder
     */
    public QueuePairBuilder sendCq(CompletionQueue cq) { sendCq = cq; return this; }
    /**
     * The CQ receive completions go to ({@code recv_cq}).
     *
     * @param cq the CQ, of the PD's context
     * @return this builder
     */
    public QueuePairBuilder recvCq(CompletionQueue cq) { recvCq = cq; return this; }
    /**
     * Receives come from {@code s} instead of the QP's own receive queue ({@code srq}). Default none.
     *
     * @param s the SRQ, or null
     * @return this builder
     */
    public QueuePairBuilder srq(SharedReceiveQueue s) { srq = s; return this; }
    /**
     * Queue sizes ({@code cap}; copied). Default 16 send and 16 receive WRs, 1 SGE each, no inline data.
     *
     * @param c the capacities
     * @return this builder
     */
    public QueuePairBuilder cap(QpCap c) { cap = c.copy(); return this; }
    /**
     * Every send request completes with a work completion ({@code sq_sig_all}). Default off.
     *
     * @param b whether every send completes
     * @return this builder
     */
    public QueuePairBuilder sqSigAll(boolean b) { sqSigAll = b; return this; }
    /**
     * {@link Access} bits: which remote operations the QP accepts (the memory region's rkey still
     * decides per region). Default RC: REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC; UC: REMOTE_WRITE.
     * Not used by UD.
     *
     * @param a {@link Access} bits
     * @return this builder
     */
    public QueuePairBuilder access(int a) { access = a; return this; }
    /**
     * The largest path MTU this side accepts. Default the port's active MTU (never more: a larger one is
     * lowered to it).
     *
     * @param m the MTU, or null for the default
     * @return this builder
     */
    public QueuePairBuilder mtu(Mtu m) { mtu = m; return this; }
    /**
     * RC local ACK timeout exponent ({@code timeout}; 4.096 us * 2^t, 0 = infinite). Default 14 (67 ms).
     *
     * @param t 0..31
     * @return this builder
     */
    public QueuePairBuilder timeout(int t) { timeout = t; return this; }
    /**
     * RC retransmissions after a timeout or sequence NAK ({@code retry_cnt}), 0..7. Default 7.
     *
     * @param n 0..7
     * @return this builder
     */
    public QueuePairBuilder retryCnt(int n) { retryCnt = n; return this; }
    /**
     * RC retries after an RNR NAK ({@code rnr_retry}), 0..7 (7 = for ever). Default 7.
     *
     * @param n 0..7
     * @return this builder
     */
    public QueuePairBuilder rnrRetry(int n) { rnrRetry = n; return this; }
    /**
     * RC: the RNR NAK timer code this QP advertises ({@code min_rnr_timer}). Default 12 (0.64 ms).
     *
     * @param t 0..31
     * @return this builder
     */
    public QueuePairBuilder minRnrTimer(int t) { minRnrTimer = t; return this; }
    /**
     * RC: outstanding READ/atomic requests this QP issues ({@code max_rd_atomic}). Default the device's {@code
     * max_qp_init_rd_atom}, at most 16.
     *
     * @param n the initiator depth
     * @return this builder
     */
    public QueuePairBuilder maxRdAtomic(int n) { maxRdAtomic = n; return this; }
    /**
     * RC: incoming READ/atomic requests this QP accepts ({@code max_dest_rd_atomic}). Default the device's
     * {@code max_qp_rd_atom}, at most 16.
     *
     * @param n the responder resources
     * @return this builder
     */
    public QueuePairBuilder maxDestRdAtomic(int n) { maxDestRdAtomic = n; return this; }
    /**
     * The 24-bit PSN this QP sends with first ({@code sq_psn}; the peer's {@code rq_psn}). Default
     * random, as ibv_rc_pingpong does.
     *
     * @param p 0 to 0xFFFFFF
     * @return this builder
     * @throws IllegalArgumentException for a value of more than 24 bits
     */
    public QueuePairBuilder psn(int p) {
        if ((p & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("a PSN has 24 bits: " + p);
        }
        psn = p;
        return this;
    }
    /**
     * The port ({@code port_num}). Default 1.
     *
     * @param p the port, from 1
     * @return this builder
     */
    public QueuePairBuilder port(int p) { port = p; return this; }
    /**
     * The local GID index the QP sends from ({@code sgid_index}). Default {@link #defaultGidIndex}: the
     * routable RoCE v2 address.
     *
     * @param i the index
     * @return this builder
     */
    public QueuePairBuilder gidIndex(int i) { gidIndex = i; return this; }
    /**
     * The P_Key index ({@code pkey_index}). Default 0.
     *
     * @param i the index in the port's P_Key table
     * @return this builder
     */
    public QueuePairBuilder pkeyIndex(int i) { pkeyIndex = i; return this; }
    /**
     * UD Q_Key ({@code qkey}). Default {@link #DEFAULT_QKEY}.
     *
     * @param k the Q_Key
     * @return this builder
     */
    public QueuePairBuilder qkey(int k) { qkey = k; return this; }
    /**
     * Hop limit (IP TTL) of the route to the peer ({@code grh.hop_limit}). Default 64.
     *
     * @param h 0..255
     * @return this builder
     */
    public QueuePairBuilder hopLimit(int h) { hopLimit = h; return this; }
    /**
     * Traffic class (IP TOS) of the route to the peer ({@code grh.traffic_class}). Default 0.
     *
     * @param t 0..255
     * @return this builder
     */
    public QueuePairBuilder trafficClass(int t) { trafficClass = t; return this; }
    /**
     * Service level of the route to the peer ({@code ah_attr.sl}). Default 0.
     *
     * @param sl the service level
     * @return this builder
     */
    public QueuePairBuilder serviceLevel(int sl) { serviceLevel = sl; return this; }

    /**
     * Creates the QP and moves it to INIT. The QP belongs to the returned object: close that (or the
     * QP) when done. Errors are those of {@code ibv_create_qp} and {@code ibv_modify_qp}; on an error
     * nothing is left behind.
     *
     * @return the QP in INIT, with what its peer needs ({@link PreparedQueuePair#endpoint()})
     * @throws VerbsException the errors of {@code ibv_create_qp}, {@code ibv_query_port},
     *     {@code ibv_modify_qp} and {@code ibv_query_gid}
     */
    public PreparedQueuePair prepare() {
        QueuePair qp = pd.createQp(new QpInitAttr(type, sendCq, recvCq).cap(cap.copy()).srq(srq).sqSigAll(sqSigAll));
        try {
            return prepare(qp);
        } catch (RuntimeException e) {
            try {
                qp.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Moves an existing {@code qp} (of this builder's type, in RESET) to INIT with this builder's
     * settings; the builder's PD, CQs, SRQ and caps are not used. The GID is read after the move, so a
     * bad GID index fails (EINVAL, or ENODATA for an empty entry) with the QP in INIT.
     *
     * @param qp a QP of this builder's type, in RESET
     * @return the QP in INIT, wrapped
     * @throws VerbsException EINVAL for a QP of another type; the errors of {@code ibv_modify_qp} and
     *     {@code ibv_query_gid}
     */
    public PreparedQueuePair prepare(QueuePair qp) {
        if (qp.type() != type) {
            throw new VerbsException(Errno.EINVAL, "a " + qp.type() + " QP given to a builder of " + type + " QPs");
        }
        Context ctx = qp.context();
        PortAttr pa = ctx.queryPort(port);
        Mtu m = mtu == null || mtu.bytes() > pa.activeMtu().bytes() ? pa.activeMtu() : mtu;
        int rd = maxRdAtomic;
        int dest = maxDestRdAtomic;
        if (type == QpType.RC && (rd < 0 || dest < 0)) {
            DeviceAttr da = ctx.queryDevice();
            rd = rd >= 0 ? rd : Math.min(16, da.maxQpInitRdAtom());
            dest = dest >= 0 ? dest : Math.min(16, da.maxQpRdAtom());
        }
        int a = access >= 0 ? access : type == QpType.UC ? Access.REMOTE_WRITE
                : Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
        int p = psn >= 0 ? psn : ThreadLocalRandom.current().nextInt(1 << 24);
        QpAttr init = new QpAttr().state(QpState.INIT).pkeyIndex(pkeyIndex).portNum(port);
        if (type == QpType.UD) {
            init.qkey(qkey);
        } else {
            init.accessFlags(a);
        }
        PreparedQueuePair.step(qp, init, QpState.RESET, QpState.INIT);
        // the GID last, as ibv_*_pingpong reads it after the move to INIT (a bad index fails there)
        int gi = gidIndex >= 0 ? gidIndex : defaultGidIndex(ctx, port);
        Gid gid = ctx.queryGid(port, gi);
        return new PreparedQueuePair(qp, port, gi, gid, pa.lid(), pa.linkLayer(), m, p, type == QpType.UD ? qkey : 0,
                timeout, retryCnt, rnrRetry, minRnrTimer, rd, dest, hopLimit, trafficClass, serviceLevel);
    }

    /**
     * The GID index a QP on {@code port} sends from unless told otherwise: the first RoCE v2 entry with
     * a routable address (IPv4-mapped, or IPv6 that is not link-local), else the first RoCE v2 entry,
     * else the first non-empty entry of any type. A link-local (fe80::/10) GID is reachable only on
     * its own link and never over an IPv4 network, which is why it is the last RoCE v2 choice.
     * ENODATA when the port has no GID at all.
     *
     * @param ctx  the context
     * @param port the port, from 1
     * @return the GID index
     * @throws VerbsException ENODATA as described; EINVAL for a port that does not exist
     */
    public static int defaultGidIndex(Context ctx, int port) {
        int len = ctx.queryPort(port).gidTblLen();
        int best = -1;
        int bestRank = 0;
        for (int i = 0; i < len; i++) {
            GidEntry e;
            try {
                e = ctx.queryGidEntry(port, i);
            } catch (VerbsException ex) {
                if (ex.errno() == Errno.ENODATA) {
                    continue;
                }
                throw ex;
            }
            int rank = rank(e);
            if (rank > bestRank) {
                best = i;
                bestRank = rank;
            }
        }
        if (best < 0) {
            throw new VerbsException(Errno.ENODATA, ctx.device().name() + " port " + port + " has no GID");
        }
        return best;
    }

    private static int rank(GidEntry e) {
        Gid g = e.gid();
        if (g.isZero() || g.isMulticast()) {
            return 0;
        }
        if (e.type() != GidEntry.GidType.ROCE_V2) {
            return 1;
        }
        boolean linkLocal = !g.isIpv4Mapped() && g.byteAt(0) == (byte) 0xFE && (g.byteAt(1) & 0xC0) == 0x80;
        return linkLocal ? 2 : 3;
    }
}

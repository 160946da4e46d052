// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Objects;
import org.rdma4j.nativeverbs.abi.CmConstants;
import org.rdma4j.nativeverbs.abi.CmLayouts;
import org.rdma4j.nativeverbs.abi.QpLayouts;
import org.rdma4j.nativeverbs.abi.Rdmacm;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.CmProvider;

/**
 * One {@code struct rdma_cm_id}. Calls go straight to librdmacm (which is thread safe); a closed id
 * refuses them with EBADF, as a destroyed one would be unusable in C.
 */
final class NativeCmId implements CmProvider.Id {
    private static final long VERBS = offset(CmLayouts.rdma_cm_id, "verbs");
    private static final long PS = offset(CmLayouts.rdma_cm_id, "ps");
    private static final long PORT_NUM = offset(CmLayouts.rdma_cm_id, "port_num");
    private static final long SRC = offset(CmLayouts.rdma_cm_id, "route.addr.src_storage");
    private static final long DST = offset(CmLayouts.rdma_cm_id, "route.addr.dst_storage");
    private static final long SGID = offset(CmLayouts.rdma_cm_id, "route.addr.addr.ibaddr.sgid");
    private static final long DGID = offset(CmLayouts.rdma_cm_id, "route.addr.addr.ibaddr.dgid");
    private static final long SIN_PORT = offset(CmLayouts.sockaddr_in, "sin_port");
    private static final long SIN_ADDR = offset(CmLayouts.sockaddr_in, "sin_addr");
    private static final long SIN6_PORT = offset(CmLayouts.sockaddr_in6, "sin6_port");
    private static final long SIN6_ADDR = offset(CmLayouts.sockaddr_in6, "sin6_addr");
    private static final long SIN6_SCOPE = offset(CmLayouts.sockaddr_in6, "sin6_scope_id");

    private final NativeCm cm;
    private final MemorySegment id;
    private volatile CmProvider.Listener listener;
    private volatile boolean closed;
    private volatile NativeQueuePair qp;
    /** The joined groups (sockaddr as joined) and the contexts of the joins by their token. */
    private final java.util.Map<InetAddress, Long> joins = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<Long, Object> joinContexts = new java.util.concurrent.ConcurrentHashMap<>();
    private static final java.util.concurrent.atomic.AtomicLong NEXT_TOKEN = new java.util.concurrent.atomic.AtomicLong(1);
    private static final long MC_COMP_MASK = offset(CmLayouts.rdma_cm_join_mc_attr_ex, "comp_mask");
    private static final long MC_JOIN_FLAGS = offset(CmLayouts.rdma_cm_join_mc_attr_ex, "join_flags");
    private static final long MC_ADDR = offset(CmLayouts.rdma_cm_join_mc_attr_ex, "addr");

    NativeCmId(NativeCm cm, MemorySegment id, CmProvider.Listener listener) {
        this.cm = cm;
        this.id = id;
        this.listener = listener;
    }

    MemorySegment handle() {
        return id;
    }

    boolean isUd() {
        return id.get(ValueLayout.JAVA_INT, PS) == CmConstants.RDMA_PS_UDP;
    }

    void deliver(CmProvider.Event e) {
        CmProvider.Listener l = listener;
        if (!closed && l != null) {
            l.onEvent(e);
        }
    }

    @Override
    public void listener(CmProvider.Listener l) {
        this.listener = l;
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException(Errno.EBADF, "the rdma_cm id is destroyed");
        }
    }

    /** Runs a librdmacm call that returns 0 or -1 with errno. */
    private void call(String what, Call c) {
        checkOpen();
        try (Arena a = Arena.ofConfined()) {
            Downcalls.check(() -> what, e -> c.invoke(a, e));
        }
    }

    @FunctionalInterface
    private interface Call {
        int invoke(Arena a, MemorySegment errno) throws Throwable;
    }

    @Override
    public void bindAddr(InetSocketAddress addr) {
        call("rdma_bind_addr(" + addr + ")", (a, e) -> (int) Rdmacm.rdma_bind_addr.invokeExact(e, id, sockaddr(a, addr)));
    }

    @Override
    public void resolveAddr(InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        Objects.requireNonNull(dst, "dst");
        call("rdma_resolve_addr(" + dst + ")", (a, e) -> {
            // a conditional would be typed Object in a signature-polymorphic call: a local keeps it exact
            MemorySegment from = src == null ? MemorySegment.NULL : sockaddr(a, src);
            return (int) Rdmacm.rdma_resolve_addr.invokeExact(e, id, from, sockaddr(a, dst), timeoutMs);
        });
    }

    @Override
    public void resolveRoute(int timeoutMs) {
        call("rdma_resolve_route", (a, e) -> (int) Rdmacm.rdma_resolve_route.invokeExact(e, id, timeoutMs));
    }

    @Override
    public void listen(int backlog) {
        call("rdma_listen", (a, e) -> (int) Rdmacm.rdma_listen.invokeExact(e, id, backlog));
    }

    @Override
    public QueuePair createQp(ProtectionDomain pd, QpInitAttr attr) {
        checkOpen();
        Context ctx = context();
        if (!(pd instanceof NativeProtectionDomain npd) || ctx == null || npd.context() != ctx) {
            throw new VerbsException(Errno.EINVAL, "the PD must be one of the id's context (CmId.context())");
        }
        if (qp != null && !qp.isClosed()) {
            throw new VerbsException(Errno.EINVAL, "the id has a QP already");
        }
        NativeQueuePair q = new NativeQueuePair(npd, attr, id);
        qp = q;
        return q;
    }

    @Override
    public void destroyQp() {
        if (!closed) {
            leaveAll();
        }
        NativeQueuePair q = qp;
        if (q != null) {
            q.close();
            qp = null;
        }
    }

    @Override
    public void connect(CmProvider.Param p) {
        call("rdma_connect", (a, e) -> (int) Rdmacm.rdma_connect.invokeExact(e, id, param(a, p)));
    }

    @Override
    public void accept(CmProvider.Param p) {
        call("rdma_accept", (a, e) -> (int) Rdmacm.rdma_accept.invokeExact(e, id, param(a, p)));
    }

    @Override
    public void reject(byte[] privateData) {
        byte[] pd = privateData == null ? new byte[0] : privateData;
        if (pd.length > 255) {
            throw new VerbsException(Errno.EINVAL, "at most 255 bytes of private data, got " + pd.length);
        }
        call("rdma_reject", (a, e) -> {
            MemorySegment data = pd.length == 0 ? MemorySegment.NULL : a.allocateFrom(ValueLayout.JAVA_BYTE, pd);
            return (int) Rdmacm.rdma_reject.invokeExact(e, id, data, (byte) pd.length);
        });
    }

    @Override
    public void establish() {
        call("rdma_establish", (a, e) -> (int) Rdmacm.rdma_establish.invokeExact(e, id));
    }

    @Override
    public QpAttr initQpAttr(QpState state) {
        QpAttr[] out = new QpAttr[1];
        call("rdma_init_qp_attr(" + state + ")", (a, e) -> {
            MemorySegment attr = a.allocate(QpLayouts.IBV_QP_ATTR);
            MemorySegment mask = a.allocate(ValueLayout.JAVA_INT);
            attr.set(ValueLayout.JAVA_INT, QpAttrCodec.QP_STATE, state.value());
            int rc = (int) Rdmacm.rdma_init_qp_attr.invokeExact(e, id, attr, mask);
            if (rc == 0) {
                out[0] = QpAttrCodec.decodeMasked(attr, mask.get(ValueLayout.JAVA_INT, 0));
            }
            return rc;
        });
        return out[0];
    }

    @Override
    public void disconnect() {
        call("rdma_disconnect", (a, e) -> (int) Rdmacm.rdma_disconnect.invokeExact(e, id));
    }

    /**
     * rdma_join_multicast_ex. The context is passed to librdmacm as a token (a small number, never
     * dereferenced) that the MULTICAST_JOIN/ERROR event gives back; librdmacm attaches the id's QP when it
     * reads MULTICAST_JOIN (unless send-only).
     */
    @Override
    public void joinMulticast(InetAddress group, boolean sendOnly, Object context) {
        long token = NEXT_TOKEN.getAndIncrement();
        if (joins.putIfAbsent(group, token) != null) {
            throw new VerbsException(Errno.EADDRINUSE, "the id has joined " + group.getHostAddress() + " already");
        }
        joinContexts.put(token, context == null ? NO_CONTEXT : context);
        try {
            call("rdma_join_multicast_ex(" + group.getHostAddress() + ")", (a, e) -> {
                MemorySegment attr = a.allocate(CmLayouts.rdma_cm_join_mc_attr_ex);
                attr.set(ValueLayout.JAVA_INT, MC_COMP_MASK,
                        CmConstants.RDMA_CM_JOIN_MC_ATTR_ADDRESS | CmConstants.RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS);
                attr.set(ValueLayout.JAVA_INT, MC_JOIN_FLAGS, sendOnly ? CmConstants.RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER
                        : CmConstants.RDMA_MC_JOIN_FLAG_FULLMEMBER);
                attr.set(ValueLayout.ADDRESS, MC_ADDR, sockaddr(a, new InetSocketAddress(group, 0)));
                return (int) Rdmacm.rdma_join_multicast_ex.invokeExact(e, id, attr, MemorySegment.ofAddress(token));
            });
        } catch (RuntimeException ex) {
            joins.remove(group, token);
            joinContexts.remove(token);
            throw ex;
        }
    }

    private static final Object NO_CONTEXT = new Object();

    /** {@return the context of the join whose token a multicast event carries, or null} */
    Object joinContext(long token) {
        Object c = joinContexts.get(token);
        return c == NO_CONTEXT ? null : c;
    }

    /** rdma_leave_multicast: librdmacm detaches the QP (unless send-only); EADDRNOTAVAIL when not joined. */
    @Override
    public void leaveMulticast(InetAddress group) {
        call("rdma_leave_multicast(" + group.getHostAddress() + ")", (a, e) ->
                (int) Rdmacm.rdma_leave_multicast.invokeExact(e, id, sockaddr(a, new InetSocketAddress(group, 0))));
        Long token = joins.remove(group);
        if (token != null) {
            joinContexts.remove(token);
        }
    }

    /** Leaves every group: the QP is detached (a QP still attached cannot be destroyed: EBUSY). */
    private void leaveAll() {
        for (InetAddress g : java.util.List.copyOf(joins.keySet())) {
            try {
                leaveMulticast(g);
            } catch (VerbsException e) {
                joins.remove(g); // nothing left to undo
            }
        }
    }

    @Override
    public void setAckTimeout(int exponent) {
        call("rdma_set_option(ACK_TIMEOUT)", (a, e) -> (int) Rdmacm.rdma_set_option.invokeExact(e, id,
                CmConstants.RDMA_OPTION_ID, CmConstants.RDMA_OPTION_ID_ACK_TIMEOUT,
                a.allocateFrom(ValueLayout.JAVA_BYTE, (byte) exponent), 1L));
    }

    @Override
    public Context context() {
        if (closed) {
            return null;
        }
        MemorySegment verbs = id.get(ValueLayout.ADDRESS, VERBS);
        return verbs.equals(MemorySegment.NULL) ? null : cm.context(verbs);
    }

    @Override
    public int portNum() {
        return closed ? 0 : id.get(ValueLayout.JAVA_BYTE, PORT_NUM) & 0xFF;
    }

    @Override
    public InetSocketAddress localAddress() {
        return closed ? null : address(id.asSlice(SRC, CmLayouts.sockaddr_storage.byteSize()));
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return closed ? null : address(id.asSlice(DST, CmLayouts.sockaddr_storage.byteSize()));
    }

    @Override
    public Gid sourceGid() {
        return closed ? null : gid(SGID);
    }

    @Override
    public Gid destinationGid() {
        return closed ? null : gid(DGID);
    }

    private Gid gid(long off) {
        Gid g = Gid.of(id.asSlice(off, Gid.LENGTH).toArray(ValueLayout.JAVA_BYTE));
        return g.isZero() ? null : g;
    }

    /** rdma_destroy_id; the QP made on the id (if any) stays for the program to destroy, as in C. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            leaveAll(); // rdma_destroy_id would leave the QP attached
            closed = true;
        }
        cm.forget(this);
        Downcalls.check(() -> "rdma_destroy_id", e -> (int) Rdmacm.rdma_destroy_id.invokeExact(e, id));
    }

    /** A {@code struct sockaddr_in} or {@code sockaddr_in6} for {@code a} in {@code arena}. */
    static MemorySegment sockaddr(Arena arena, InetSocketAddress a) {
        InetAddress ip = a.getAddress();
        if (a.isUnresolved() || ip == null) {
            throw new VerbsException(Errno.EINVAL, "unresolved address " + a);
        }
        short port = Short.reverseBytes((short) a.getPort()); // network order
        if (ip instanceof Inet4Address) {
            MemorySegment s = arena.allocate(CmLayouts.sockaddr_in);
            s.set(ValueLayout.JAVA_SHORT, 0, (short) CmConstants.AF_INET);
            s.set(ValueLayout.JAVA_SHORT, SIN_PORT, port);
            MemorySegment.copy(ip.getAddress(), 0, s, ValueLayout.JAVA_BYTE, SIN_ADDR, 4);
            return s;
        }
        MemorySegment s = arena.allocate(CmLayouts.sockaddr_in6);
        s.set(ValueLayout.JAVA_SHORT, 0, (short) CmConstants.AF_INET6);
        s.set(ValueLayout.JAVA_SHORT, SIN6_PORT, port);
        MemorySegment.copy(ip.getAddress(), 0, s, ValueLayout.JAVA_BYTE, SIN6_ADDR, 16);
        s.set(ValueLayout.JAVA_INT, SIN6_SCOPE, ((Inet6Address) ip).getScopeId());
        return s;
    }

    /** The address a {@code struct sockaddr_storage} holds, or null when its family is neither IPv4 nor IPv6. */
    static InetSocketAddress address(MemorySegment s) {
        int family = s.get(ValueLayout.JAVA_SHORT, 0) & 0xFFFF;
        try {
            if (family == CmConstants.AF_INET) {
                int port = Short.reverseBytes(s.get(ValueLayout.JAVA_SHORT, SIN_PORT)) & 0xFFFF;
                byte[] ip = s.asSlice(SIN_ADDR, 4).toArray(ValueLayout.JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), port);
            }
            if (family == CmConstants.AF_INET6) {
                int port = Short.reverseBytes(s.get(ValueLayout.JAVA_SHORT, SIN6_PORT)) & 0xFFFF;
                byte[] ip = s.asSlice(SIN6_ADDR, 16).toArray(ValueLayout.JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), port);
            }
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // 4 or 16 bytes are always an address
        }
        return null;
    }

    private static MemorySegment param(Arena a, CmProvider.Param p) {
        MemorySegment c = a.allocate(CmLayouts.rdma_conn_param);
        byte[] pd = p.privateData() == null ? new byte[0] : p.privateData();
        if (pd.length > 255) {
            throw new VerbsException(Errno.EINVAL, "at most 255 bytes of private data, got " + pd.length);
        }
        c.set(ValueLayout.ADDRESS, NativeCm.PARAM_PD, pd.length == 0 ? MemorySegment.NULL
                : a.allocateFrom(ValueLayout.JAVA_BYTE, pd));
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_PD_LEN, (byte) pd.length);
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_RESP, (byte) p.responderResources());
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_INIT, (byte) p.initiatorDepth());
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_FLOW, (byte) p.flowControl());
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_RETRY, (byte) p.retryCount());
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_RNR, (byte) p.rnrRetryCount());
        c.set(ValueLayout.JAVA_BYTE, NativeCm.PARAM_SRQ, (byte) p.srq());
        c.set(ValueLayout.JAVA_INT, NativeCm.PARAM_QPN, p.qpNum());
        return c;
    }

    @Override
    public String toString() {
        return "rdma_cm_id@0x" + Long.toHexString(id.address());
    }
}

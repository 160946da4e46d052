// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rdma4j.nativeverbs.abi.DeviceConstants;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PortState;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractContext;
import org.rdma4j.verbs.spi.AsyncEventAcks;
import org.rdma4j.verbs.spi.PortRules;
import org.rdma4j.verbs.spi.CmProvider;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/**
 * An open libibverbs device ({@code struct ibv_context}). Asynchronous events are read from the
 * non-blocking {@code async_fd} after poll(2) says one is there; the CQ, QP or SRQ an event names is
 * found again with {@link #tracked}. Thread safe.
 */
public final class NativeContext extends AbstractContext implements CmProvider.CmAccess {
    private static final long CTX_OPS = offset(DeviceLayouts.ibv_context, "ops");
    private static final long CTX_ASYNC_FD = offset(DeviceLayouts.ibv_context, "async_fd");
    private static final long CTX_NUM_COMP_VECTORS = offset(DeviceLayouts.ibv_context, "num_comp_vectors");
    private static final long CTX_ABI_COMPAT = offset(DeviceLayouts.ibv_context, "abi_compat");
    private static final long VCTX_CONTEXT = offset(DeviceLayouts.verbs_context, "context");
    private static final long VCTX_SZ = offset(DeviceLayouts.verbs_context, "sz");
    private static final long VCTX_QUERY_PORT = offset(DeviceLayouts.verbs_context, "query_port");
    private static final long EVENT_ELEMENT = offset(DeviceLayouts.ibv_async_event, "element");
    private static final long EVENT_TYPE = offset(DeviceLayouts.ibv_async_event, "event_type");

    private final NativeDevice device;
    private final MemorySegment handle;
    private final EventSource async;
    private final String sysfsName;
    /** Native object address (cq, qp, srq) -> its Java object, for asynchronous events. */
    private final Map<Long, Object> tracked = new ConcurrentHashMap<>();
    /** The other way, to rebuild an event for ibv_ack_async_event. */
    private final Map<Object, Long> addresses = new ConcurrentHashMap<>();
    /** Asynchronous events returned and not yet acknowledged, per CQ/QP/SRQ (S-LIFE-6). */
    private final AsyncEventAcks acks = new AsyncEventAcks();
    /** False for a context librdmacm opened ({@code cm_id->verbs}): closing it must not close the device. */
    private final boolean owned;
    /** What the SPI's rules need of the device, read at first use. */
    private volatile NativeLimits limits;

    NativeContext(NativeDevice device, MemorySegment handle) {
        this(device, handle, true);
    }

    NativeContext(NativeDevice device, MemorySegment handle, boolean owned) {
        this.owned = owned;
        this.device = device;
        this.sysfsName = device.name();
        this.handle = Native.at(handle, DeviceLayouts.ibv_context.byteSize());
        EventSource a;
        try {
            a = new EventSource(this.handle.get(ValueLayout.JAVA_INT, CTX_ASYNC_FD), describe() + " async events");
        } catch (RuntimeException e) {
            if (owned) {
                closeDevice();
            }
            throw e;
        }
        this.async = a;
    }

    /** The {@code struct ibv_context *}. */
    public MemorySegment handle() {
        return handle;
    }

    /** Maps {@code nativeObj} (a cq, qp or srq pointer) to {@code o} for {@link #tracked}. */
    public void track(MemorySegment nativeObj, Object o) {
        tracked.put(nativeObj.address(), o);
        addresses.put(o, nativeObj.address());
    }

    /** Forgets {@code nativeObj}: call before destroying it. */
    public void untrack(MemorySegment nativeObj) {
        Object o = tracked.remove(nativeObj.address());
        if (o != null) {
            addresses.remove(o);
            acks.forget(o);
        }
    }

    /** The Java object {@link #track} recorded for a native address, or null. */
    public Object tracked(long address) {
        return tracked.get(address);
    }

    /**
     * Asynchronous events about {@code o} (a CQ, QP or SRQ) returned by {@link #getAsyncEvent} and not
     * yet acknowledged. libibverbs' destroy of that object waits until this is 0, so its close must
     * refuse (EBUSY) while it is not.
     */
    public int unackedAsyncEvents(Object o) {
        return acks.outstanding(o);
    }

    @Override
    public NativeDevice device() {
        return device;
    }

    /** The address of an operation in {@code ctx->ops} (e.g. "alloc_mw"); NULL when the provider has none. */
    MemorySegment op(String name) {
        return handle.get(ValueLayout.ADDRESS, CTX_OPS + offset(DeviceLayouts.ibv_context_ops, name));
    }

    int numCompVectors() {
        return handle.get(ValueLayout.JAVA_INT, CTX_NUM_COMP_VECTORS);
    }

    /** The device limits the verbs SPI's rules check against, queried once. */
    NativeLimits limits() {
        NativeLimits l = limits;
        if (l == null) {
            DeviceAttr d = queryDevice();
            int[] pkeys = new int[Math.max(0, d.physPortCnt())];
            for (int p = 1; p <= pkeys.length; p++) {
                pkeys[p - 1] = queryPort(p).pkeyTblLen();
            }
            l = NativeLimits.of(d, pkeys);
            limits = l;
        }
        return l;
    }

    @Override
    public DeviceAttr queryDevice() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(DeviceLayouts.ibv_device_attr);
            Downcalls.check(() -> "ibv_query_device(" + device.name() + ")",
                    e -> (int) Ibv.ibv_query_device.invokeExact(e, handle, a));
            return DeviceAttrs.read(a, numCompVectors());
        }
    }

    /**
     * As the ibv_query_port wrapper of verbs.h: through the extended context's {@code query_port} when
     * the context has one (passing the size of this header's struct), else the exported compat
     * function on a zeroed struct.
     */
    @Override
    public PortAttr queryPort(int portNum) {
        ensureOpen();
        checkU8(portNum, "port");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(DeviceLayouts.ibv_port_attr); // zeroed
            MemorySegment queryPort = queryPortOp();
            Downcalls.check(() -> "ibv_query_port(" + device.name() + ", port " + portNum + ")",
                    e -> queryPort.equals(MemorySegment.NULL)
                            ? (int) Ibv.ibv_query_port.invokeExact(e, handle, (byte) portNum, a)
                            : (int) Ibv.QUERY_PORT_OP.invokeExact(queryPort, e, handle, (byte) portNum, a,
                                    DeviceLayouts.ibv_port_attr.byteSize()));
            return DeviceAttrs.readPort(a);
        }
    }

    /** {@code verbs_get_ctx_op(ctx, query_port)}: the op's address, or NULL. */
    private MemorySegment queryPortOp() {
        if (handle.get(ValueLayout.JAVA_LONG, CTX_ABI_COMPAT) != -1L) { // __VERBS_ABI_IS_EXTENDED
            return MemorySegment.NULL;
        }
        MemorySegment vctx = Native.at(MemorySegment.ofAddress(handle.address() - VCTX_CONTEXT),
                DeviceLayouts.verbs_context.byteSize());
        long sz = vctx.get(ValueLayout.JAVA_LONG, VCTX_SZ);
        if (sz < DeviceLayouts.verbs_context.byteSize() - VCTX_QUERY_PORT) {
            return MemorySegment.NULL;
        }
        return vctx.get(ValueLayout.ADDRESS, VCTX_QUERY_PORT);
    }

    @Override
    public GidEntry queryGidEntry(int portNum, int index) {
        ensureOpen();
        if (portNum < 0 || index < 0) {
            throw new VerbsException(Errno.EINVAL, "bad port " + portNum + " or GID index " + index);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment entry = arena.allocate(DeviceLayouts.ibv_gid_entry);
            Downcalls.check(() -> "ibv_query_gid_ex(" + device.name() + ", port " + portNum + ", index " + index + ")",
                    e -> (int) Ibv._ibv_query_gid_ex.invokeExact(e, handle, portNum, index, entry, 0,
                            DeviceLayouts.ibv_gid_entry.byteSize()));
            return DeviceAttrs.readGidEntry(entry);
        }
    }

    @Override
    public int queryPkey(int portNum, int index) {
        ensureOpen();
        // the SPI's rule, as on every provider (libibverbs reads sysfs: ENOENT past the table's end)
        PortRules.checkPkeyIndex(portNum, limits().portCount(), index,
                portNum >= 1 && portNum <= limits().portCount() ? queryPort(portNum).pkeyTblLen() : 0);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.JAVA_SHORT);
            Downcalls.check(() -> "ibv_query_pkey(" + device.name() + ", port " + portNum + ", index " + index + ")",
                    e -> (int) Ibv.ibv_query_pkey.invokeExact(e, handle, (byte) portNum, index, p));
            return Short.reverseBytes(p.get(ValueLayout.JAVA_SHORT, 0)) & 0xffff; // __be16
        }
    }

    private static void checkU8(int v, String what) {
        if (v < 0 || v > 255) {
            throw new VerbsException(Errno.EINVAL, "bad " + what + " " + v);
        }
    }

    @Override
    protected ProtectionDomain newPd() {
        return new NativeProtectionDomain(this);
    }

    @Override
    protected CompletionChannel newChannel() {
        return new NativeCompletionChannel(this);
    }

    @Override
    public CompletionQueue createCq(int cqe, CompletionChannel channel, int compVector) {
        return new NativeCompletionQueue(this, cqe, (NativeCompletionChannel) channel, compVector);
    }

    EventSource asyncSource() {
        return async;
    }

    @Override
    public AsyncEvent getAsyncEvent(long timeoutMs) throws InterruptedException {
        if (!async.enter()) {
            throw Fds.closed(describe());
        }
        try {
            long deadline = EventSource.deadline(timeoutMs);
            ErrnoCapture errno = ErrnoCapture.perThread();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ev = arena.allocate(DeviceLayouts.ibv_async_event);
                while (true) {
                    int rc = (int) Ibv.ibv_get_async_event.invokeExact(errno.segment(), handle, ev);
                    if (rc == 0) {
                        AsyncEvent e = toEvent(ev);
                        if (e != null) {
                            return e;
                        }
                        continue; // about an object nobody tracks: acknowledged, not returned
                    }
                    if (errno.errno() != Errno.EAGAIN) {
                        throw Downcalls.fail(rc, "ibv_get_async_event(" + device.name() + ")");
                    }
                    if (!async.await(timeoutMs, deadline)) {
                        return null;
                    }
                }
            }
        } catch (RuntimeException | Error | InterruptedException e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            async.exit();
        }
    }

    /** The API event for a native one, or null (after acknowledging it) when its object is not tracked. */
    private AsyncEvent toEvent(MemorySegment ev) throws Throwable {
        int type = ev.get(ValueLayout.JAVA_INT, EVENT_TYPE);
        AsyncEventType[] types = AsyncEventType.values();
        if (type < 0 || type >= types.length) {
            Ibv.ibv_ack_async_event.invokeExact(ev);
            return null;
        }
        AsyncEventType t = types[type];
        if (kind(t) == 'p') {
            return AsyncEvent.ofPort(t, ev.get(ValueLayout.JAVA_INT, EVENT_ELEMENT));
        }
        if (kind(t) == 'd') {
            return new AsyncEvent(t, null, null, null, 0);
        }
        Object o = tracked.get(ev.get(ValueLayout.ADDRESS, EVENT_ELEMENT).address());
        AsyncEvent e = switch (kind(t)) {
            case 'c' -> o instanceof CompletionQueue cq ? AsyncEvent.ofCq(t, cq) : null;
            case 'q' -> o instanceof QueuePair qp ? AsyncEvent.ofQp(t, qp) : null;
            case 's' -> o instanceof SharedReceiveQueue srq ? AsyncEvent.ofSrq(t, srq) : null;
            default -> null; // a WQ: the API has none
        };
        if (e == null) {
            Ibv.ibv_ack_async_event.invokeExact(ev);
            return null;
        }
        acks.reported(e);
        return e;
    }

    /** What an event's element is: c(q), q(p), s(rq), w(q), p(ort), d(evice). */
    private static char kind(AsyncEventType t) {
        return switch (t) {
            case CQ_ERR -> 'c';
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR,
                    QP_LAST_WQE_REACHED -> 'q';
            case SRQ_ERR, SRQ_LIMIT_REACHED -> 's';
            case WQ_FATAL -> 'w';
            case DEVICE_FATAL -> 'd';
            default -> 'p';
        };
    }

    @Override
    public boolean hasAsyncEvent() {
        return async.ready();
    }

    @Override
    protected EventPoller newEventPoller() {
        return new NativeEventPoller();
    }

    /** Rebuilds the native event from the API one (type and element) and acknowledges it. */
    @Override
    public void ackAsyncEvent(AsyncEvent event) {
        Object o = AsyncEventAcks.element(event);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ev = arena.allocate(DeviceLayouts.ibv_async_event);
            ev.set(ValueLayout.JAVA_INT, EVENT_TYPE, event.type().value());
            if (o == null) {
                ev.set(ValueLayout.JAVA_INT, EVENT_ELEMENT, event.portNum());
            } else {
                Long address = addresses.get(o);
                if (address == null) {
                    throw new VerbsException(Errno.EINVAL, "acknowledging " + event.type() + " of " + o
                            + ": the object is destroyed or not of this context");
                }
                acks.acknowledge(event); // EINVAL when none is outstanding; else counted down first
                ev.set(ValueLayout.JAVA_LONG, EVENT_ELEMENT, address);
                Ibv.ibv_ack_async_event.invokeExact(ev);
                return;
            }
            Ibv.ibv_ack_async_event.invokeExact(ev);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The files of {@code /sys/class/infiniband/DEV/ports/N/counters} and {@code hw_counters} (a
     * hw_counters name that is also a counters name gets the prefix "hw_"); empty when there are none.
     */
    @Override
    public Map<String, Long> counters(int portNum) {
        ensureOpen();
        Map<String, Long> out = new LinkedHashMap<>();
        Path port = Path.of("/sys/class/infiniband", sysfsName, "ports", Integer.toString(portNum));
        readCounters(port.resolve("counters"), "", out);
        readCounters(port.resolve("hw_counters"), "hw_", out);
        return out;
    }

    private static void readCounters(Path dir, String prefixOnClash, Map<String, Long> out) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                try {
                    long v = Long.parseUnsignedLong(Files.readString(f).trim());
                    out.put(out.containsKey(name) ? prefixOnClash + name : name, v);
                } catch (IOException | NumberFormatException | SecurityException e) {
                    // unreadable (permission) or not a number (lifespan is one, but still a number): skip
                }
            }
        } catch (IOException e) {
            // the directory went away: no counters
        }
    }

    /**
     * librdmacm's connection manager for this device: its ids get contexts of their own
     * ({@code cm_id->verbs}), on which their PDs, CQs and QPs must be made.
     *
     * @throws VerbsException EOPNOTSUPP when librdmacm cannot be used (with the reason)
     */
    @Override
    public CmProvider cmProvider() {
        return NativeCm.instance();
    }

    @Override
    protected String describe() {
        return "context " + device.name();
    }

    @Override
    protected void destroy() {
        async.shutdown();
        acks.clear(); // the counts end with the context (S-LIFE-6)
        int rc = owned ? closeDevice() : 0;
        async.release();
        if (rc != 0) {
            throw new VerbsException(rc, "ibv_close_device(" + device.name() + ") failed");
        }
    }

    private int closeDevice() {
        int rc = Downcalls.status(e -> (int) Ibv.ibv_close_device.invokeExact(e, handle));
        return rc == 0 ? 0 : rc > 0 ? rc : Math.max(ErrnoCapture.perThread().errno(), Errno.EIO);
    }

    static PortState portState(int v) {
        PortState[] s = PortState.values();
        return v >= 0 && v < s.length ? s[v] : PortState.NOP;
    }

    static Mtu mtu(int v) {
        return Mtu.ofValue(v);
    }

    static LinkLayer linkLayer(int v) {
        return switch (v) {
            case DeviceConstants.IBV_LINK_LAYER_INFINIBAND -> LinkLayer.INFINIBAND;
            case DeviceConstants.IBV_LINK_LAYER_ETHERNET -> LinkLayer.ETHERNET;
            default -> LinkLayer.UNSPECIFIED;
        };
    }
}

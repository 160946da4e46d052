// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rdma4j.nativeverbs.abi.CmConstants;
import org.rdma4j.nativeverbs.abi.CmLayouts;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Rdmacm;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.CmProvider;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/**
 * librdmacm as a {@link CmProvider}: one rdma_cm event channel for the process, whose descriptor is
 * non-blocking and read by one daemon thread after poll(2) (100 ms slices), which copies each event out,
 * acknowledges it at once (so rdma_destroy_id never waits for the program) and hands the copy to the
 * id's listener. The contexts librdmacm opens ({@code cm_id->verbs}) are wrapped once each as
 * {@link NativeContext}s that do not own their device. Thread safe.
 */
final class NativeCm implements CmProvider {
    private static final System.Logger LOG = NativeLog.LOG;
    private static final long CHANNEL_FD = offset(CmLayouts.rdma_event_channel, "fd");
    private static final long EV_ID = offset(CmLayouts.rdma_cm_event, "id");
    private static final long EV_LISTEN_ID = offset(CmLayouts.rdma_cm_event, "listen_id");
    private static final long EV_EVENT = offset(CmLayouts.rdma_cm_event, "event");
    private static final long EV_STATUS = offset(CmLayouts.rdma_cm_event, "status");
    private static final long EV_CONN = offset(CmLayouts.rdma_cm_event, "param.conn");
    private static final long EV_UD = offset(CmLayouts.rdma_cm_event, "param.ud");
    static final long PARAM_PD = offset(CmLayouts.rdma_conn_param, "private_data");
    static final long PARAM_PD_LEN = offset(CmLayouts.rdma_conn_param, "private_data_len");
    static final long PARAM_RESP = offset(CmLayouts.rdma_conn_param, "responder_resources");
    static final long PARAM_INIT = offset(CmLayouts.rdma_conn_param, "initiator_depth");
    static final long PARAM_FLOW = offset(CmLayouts.rdma_conn_param, "flow_control");
    static final long PARAM_RETRY = offset(CmLayouts.rdma_conn_param, "retry_count");
    static final long PARAM_RNR = offset(CmLayouts.rdma_conn_param, "rnr_retry_count");
    static final long PARAM_SRQ = offset(CmLayouts.rdma_conn_param, "srq");
    static final long PARAM_QPN = offset(CmLayouts.rdma_conn_param, "qp_num");
    private static final long UD_PD = offset(CmLayouts.rdma_ud_param, "private_data");
    private static final long UD_PD_LEN = offset(CmLayouts.rdma_ud_param, "private_data_len");
    private static final long UD_AH = offset(CmLayouts.rdma_ud_param, "ah_attr");
    private static final long UD_QPN = offset(CmLayouts.rdma_ud_param, "qp_num");
    private static final long UD_QKEY = offset(CmLayouts.rdma_ud_param, "qkey");
    private static final long CTX_DEVICE = offset(DeviceLayouts.ibv_context, "device");

    private static volatile NativeCm instance;

    private final MemorySegment channel;
    private final EventSource source;
    /** {@code struct rdma_cm_id *} address -> its id, for the events. */
    private final Map<Long, NativeCmId> ids = new ConcurrentHashMap<>();
    /** {@code struct ibv_context *} address -> its wrapper. */
    private final Map<Long, NativeContext> contexts = new ConcurrentHashMap<>();

    private NativeCm(MemorySegment channel) {
        this.channel = channel;
        this.source = new EventSource(channel.get(ValueLayout.JAVA_INT, CHANNEL_FD), "rdma_cm event channel");
        Thread t = Thread.ofPlatform().daemon().name("rdma4j-rdmacm-events").unstarted(this::run);
        t.start();
    }

    /**
     * The process's librdmacm connection manager, its event channel made on first use.
     *
     * @throws VerbsException EOPNOTSUPP when librdmacm is missing; the errno of
     *         rdma_create_event_channel when that fails (ENODEV without RDMA devices)
     */
    static NativeCm instance() {
        NativeCm c = instance;
        if (c != null) {
            return c;
        }
        synchronized (NativeCm.class) {
            if (instance == null) {
                Throwable why = NativeProvider.libraryCause();
                if (why == null && Rdmacm.UNAVAILABLE != null) {
                    why = Rdmacm.LIBRDMACM.isAvailable() ? Rdmacm.UNAVAILABLE : new UnsatisfiedLinkError(
                            Rdmacm.LIBRARY + " not found: apt-get install librdmacm1");
                }
                if (why != null) {
                    throw new VerbsException(Errno.EOPNOTSUPP, "librdmacm cannot be used: " + why.getMessage(), why);
                }
                MemorySegment ch = Downcalls.create(() -> "rdma_create_event_channel", () -> { },
                        e -> (MemorySegment) Rdmacm.rdma_create_event_channel.invokeExact(e));
                instance = new NativeCm(Native.at(ch, CmLayouts.rdma_event_channel.byteSize()));
            }
            return instance;
        }
    }

    @Override
    public Id createId(int portSpace, Listener listener) {
        if (portSpace != CmConstants.RDMA_PS_TCP && portSpace != CmConstants.RDMA_PS_UDP) {
            throw new VerbsException(Errno.EPROTONOSUPPORT, "port space 0x" + Integer.toHexString(portSpace));
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            Downcalls.check(() -> "rdma_create_id",
                    e -> (int) Rdmacm.rdma_create_id.invokeExact(e, channel, out, MemorySegment.NULL, portSpace));
            MemorySegment id = Native.at(out.get(ValueLayout.ADDRESS, 0), CmLayouts.rdma_cm_id.byteSize());
            NativeCmId n = new NativeCmId(this, id, listener);
            ids.put(id.address(), n);
            return n;
        }
    }

    void forget(NativeCmId id) {
        ids.remove(id.handle().address(), id);
    }

    /** The wrapper of librdmacm's {@code struct ibv_context *}, made once; it does not own the device. */
    NativeContext context(MemorySegment verbs) {
        return contexts.computeIfAbsent(verbs.address(), k -> {
            MemorySegment ctx = Native.at(verbs, DeviceLayouts.ibv_context.byteSize());
            MemorySegment dev = Native.at(ctx.get(ValueLayout.ADDRESS, CTX_DEVICE), DeviceLayouts.ibv_device.byteSize());
            return new NativeContext(NativeProvider.describe(dev), ctx, false);
        });
    }

    private void run() {
        ErrnoCapture errno = ErrnoCapture.perThread();
        MemorySegment out = Arena.ofAuto().allocate(ValueLayout.ADDRESS);
        while (source.enter()) {
            try {
                int rc = (int) Rdmacm.rdma_get_cm_event.invokeExact(errno.segment(), channel, out);
                if (rc != 0) {
                    if (errno.errno() != Errno.EAGAIN) {
                        LOG.log(System.Logger.Level.WARNING, "rdma_get_cm_event failed: " + Errno.name(errno.errno()));
                    }
                    source.await(1000, EventSource.deadline(1000));
                    continue;
                }
                dispatch(Native.at(out.get(ValueLayout.ADDRESS, 0), CmLayouts.rdma_cm_event.byteSize()));
            } catch (VerbsException e) {
                return; // the channel was shut down
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.WARNING, "rdma_cm event thread", t);
            } finally {
                source.exit();
            }
        }
    }

    /** Copies the event out, acknowledges it, and gives the copy to its id's listener. */
    private void dispatch(MemorySegment ev) throws Throwable {
        int type = ev.get(ValueLayout.JAVA_INT, EV_EVENT);
        int status = ev.get(ValueLayout.JAVA_INT, EV_STATUS);
        MemorySegment idPtr = ev.get(ValueLayout.ADDRESS, EV_ID);
        MemorySegment listenPtr = ev.get(ValueLayout.ADDRESS, EV_LISTEN_ID);
        NativeCmId target;
        NativeCmId id;
        NativeCmId listenId = null;
        if (type == CmConstants.RDMA_CM_EVENT_CONNECT_REQUEST) {
            listenId = ids.get(listenPtr.address());
            id = new NativeCmId(this, Native.at(idPtr, CmLayouts.rdma_cm_id.byteSize()), null);
            ids.put(idPtr.address(), id);
            target = listenId;
        } else {
            id = ids.get(idPtr.address());
            target = id;
        }
        boolean ud = id != null && id.isUd();
        boolean mc = type == CmConstants.RDMA_CM_EVENT_MULTICAST_JOIN || type == CmConstants.RDMA_CM_EVENT_MULTICAST_ERROR;
        byte[] pd = mc ? new byte[0] : privateData(ev, ud); // a multicast event's private_data is the join's context
        CmProvider.Ud udParam = null;
        if (ud && (mc || type == CmConstants.RDMA_CM_EVENT_CONNECT_REQUEST
                || type == CmConstants.RDMA_CM_EVENT_ESTABLISHED)) {
            MemorySegment u = ev.asSlice(EV_UD, CmLayouts.rdma_ud_param.byteSize());
            Object context = mc ? id.joinContext(u.get(ValueLayout.ADDRESS, UD_PD).address()) : null;
            udParam = new CmProvider.Ud(type == CmConstants.RDMA_CM_EVENT_MULTICAST_ERROR ? null
                    : AhCodec.decode(u, UD_AH), u.get(ValueLayout.JAVA_INT, UD_QPN) & 0xFFFFFF,
                    u.get(ValueLayout.JAVA_INT, UD_QKEY), context);
        }
        CmProvider.Param param = null;
        if (!ud && (type == CmConstants.RDMA_CM_EVENT_CONNECT_REQUEST
                || type == CmConstants.RDMA_CM_EVENT_CONNECT_RESPONSE
                || type == CmConstants.RDMA_CM_EVENT_ESTABLISHED)) {
            MemorySegment c = ev.asSlice(EV_CONN, CmLayouts.rdma_conn_param.byteSize());
            param = new CmProvider.Param(pd, u8(c, PARAM_RESP), u8(c, PARAM_INIT), u8(c, PARAM_FLOW),
                    u8(c, PARAM_RETRY), u8(c, PARAM_RNR), u8(c, PARAM_SRQ),
                    c.get(ValueLayout.JAVA_INT, PARAM_QPN) & 0xFFFFFF);
        }
        int unused = (int) Rdmacm.rdma_ack_cm_event.invokeExact(ErrnoCapture.perThread().segment(), ev);
        if (target == null) {
            if (type == CmConstants.RDMA_CM_EVENT_CONNECT_REQUEST) {
                id.close(); // its listener is gone: as librdmacm's own users would, refuse it
            }
            return;
        }
        target.deliver(new CmProvider.Event(type, status, id, listenId, pd, param, udParam));
    }

    private static byte[] privateData(MemorySegment ev, boolean ud) {
        long base = ud ? EV_UD : EV_CONN;
        MemorySegment p = ev.get(ValueLayout.ADDRESS, base + (ud ? UD_PD : PARAM_PD));
        int len = ev.get(ValueLayout.JAVA_BYTE, base + (ud ? UD_PD_LEN : PARAM_PD_LEN)) & 0xFF;
        if (p.equals(MemorySegment.NULL) || len == 0) {
            return new byte[0];
        }
        return Native.at(p, len).toArray(ValueLayout.JAVA_BYTE);
    }

    private static int u8(MemorySegment s, long off) {
        return s.get(ValueLayout.JAVA_BYTE, off) & 0xFF;
    }
}

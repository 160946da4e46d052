// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One event of a {@link CmEventChannel} ({@code struct rdma_cm_event}). Every event is acknowledged
 * with {@link #ack()} once the program is done with it (rdma_ack_cm_event); the channel counts the
 * ones that are not. Immutable but for the acknowledgement; thread safe.
 */
public final class CmEvent {
    private final CmEventType type;
    private final int status;
    private final CmId id;
    private final CmId listenId;
    private final byte[] privateData;
    private final ConnParam param;
    /** Where it is counted until acknowledged: the channel it is queued on (rdma_migrate_id moves it). */
    private volatile CmEventChannel channel;
    private final org.rdma4j.verbs.AhAttr ahAttr;
    private final int qkey;
    private final Object context;
    private final String detail;
    private final AtomicBoolean acked = new AtomicBoolean();

    CmEvent(CmEventChannel channel, CmEventType type, int status, CmId id, CmId listenId, byte[] privateData,
            ConnParam param) {
        this(channel, type, status, id, listenId, privateData, param, null, 0);
    }

    CmEvent(CmEventChannel channel, CmEventType type, int status, CmId id, CmId listenId, byte[] privateData,
            ConnParam param, org.rdma4j.verbs.AhAttr ahAttr, int qkey) {
        this(channel, type, status, id, listenId, privateData, param, ahAttr, qkey, null);
    }

    CmEvent(CmEventChannel channel, CmEventType type, int status, CmId id, CmId listenId, byte[] privateData,
            ConnParam param, org.rdma4j.verbs.AhAttr ahAttr, int qkey, Object context) {
        this(channel, type, status, id, listenId, privateData, param, ahAttr, qkey, context, null);
    }

    CmEvent(CmEventChannel channel, CmEventType type, int status, CmId id, CmId listenId, byte[] privateData,
            ConnParam param, org.rdma4j.verbs.AhAttr ahAttr, int qkey, Object context, String detail) {
        this.detail = detail;
        this.context = context;
        this.ahAttr = ahAttr;
        this.qkey = qkey;
        this.channel = channel;
        this.type = type;
        this.status = status;
        this.id = id;
        this.listenId = listenId;
        this.privateData = privateData == null ? new byte[0] : privateData;
        this.param = param;
    }

    /** {@return what happened ({@code event->event})} */
    public CmEventType type() {
        return type;
    }

    /**
     * {@return the status as rdma_cm gives it ({@code event->status}): 0 on success; a negative errno (-110 ETIMEDOUT for
     * UNREACHABLE, -19 ENODEV for ADDR_ERROR); for REJECTED the IB REJ reason (8: no listener, 28: the
     * peer's consumer rejected)}
     */
    public int status() {
        return status;
    }

    /** {@return the id the event is about ({@code event->id}); for CONNECT_REQUEST the new id of the connection, the program's to accept, reject or close} */
    public CmId id() {
        return id;
    }

    /** {@return for CONNECT_REQUEST the listening id ({@code event->listen_id}), else null} */
    public CmId listenId() {
        return listenId;
    }

    /**
     * {@return a copy of the private data the peer's message carried ({@code event->param.conn.private_data},
     * or {@code param.ud.private_data}): REQ after rdma_cm's header, REP, REJ, RTU, DREQ/DREP, SIDR_REQ/REP;
     * the message's whole private-data field, zero-padded as on the wire}
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * {@return for CONNECT_REQUEST and CONNECT_RESPONSE/ESTABLISHED on the active side, the peer's parameters
     * ({@code event->param.conn}), else null}
     */
    public ConnParam param() {
        return param;
    }

    /**
     * {@return for UD ids (RDMA_PS_UDP): the address of the peer, to create the AddressHandle its datagrams
     * go through (ESTABLISHED on the active side, CONNECT_REQUEST on the passive side); for MULTICAST_JOIN
     * the group's (the MGID as the GRH's destination GID, MLID 0 on RoCE); else null}
     */
    public org.rdma4j.verbs.AhAttr ahAttr() {
        return ahAttr;
    }

    /**
     * {@return for UD ids: the peer QP's Q_Key (ESTABLISHED on the active side), for MULTICAST_JOIN the
     * group's (rdma_ud_param's qkey); else 0}
     */
    public int qkey() {
        return qkey;
    }

    /** Moves a queued, not yet taken event to another channel (under both channels' locks). */
    void channel(CmEventChannel to) {
        channel = to;
    }

    /**
     * {@return for MULTICAST_JOIN and MULTICAST_ERROR: the context given to
     * {@link CmId#joinMulticast(java.net.InetAddress, Object)} (rdma_ud_param's private_data); else null}
     */
    public Object context() {
        return context;
    }

    /**
     * {@return what the event's status means here, in words, when the connection manager knows more than
     * the errno (ADDR_ERROR: the destination with no route, or the source address the route chose that no
     * device has); else null}
     */
    public String detail() {
        return detail;
    }

    /** Acknowledges the event (rdma_ack_cm_event); a second call does nothing. Never throws. */
    public void ack() {
        if (acked.compareAndSet(false, true)) {
            channel.acked();
        }
    }

    /** {@return whether {@link #ack()} was called} */
    public boolean isAcked() {
        return acked.get();
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + ", status=" + status + ", id=" + id + (detail == null ? "" : ", " + detail) + "]";
    }
}

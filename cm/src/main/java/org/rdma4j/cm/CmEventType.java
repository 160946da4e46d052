// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

/**
 * What a {@link CmEvent} reports: rdma_cm's {@code enum rdma_cm_event_type}, in the same order, so that
 * {@link #ordinal()} is the C value ({@code RDMA_CM_EVENT_ADDR_RESOLVED} is 0). Each constant names the
 * C event and the IB CM message or step behind it; {@link CmEvent#status()} says how it ended.
 */
public enum CmEventType {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}: {@link CmId#resolveAddr} found the local device and GID for the addresses. */
    ADDR_RESOLVED,
    /**
     * {@code RDMA_CM_EVENT_ADDR_ERROR}: {@link CmId#resolveAddr} failed: no route (-ENETUNREACH,
     * -EHOSTUNREACH), no device has the source address (-ENODEV); {@link CmEvent#detail()} says which.
     */
    ADDR_ERROR,
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}: {@link CmId#resolveRoute} found the path (on RoCE: the GID pair). */
    ROUTE_RESOLVED,
    /** {@code RDMA_CM_EVENT_ROUTE_ERROR}: {@link CmId#resolveRoute} failed (-ENODEV: the port is down). */
    ROUTE_ERROR,
    /**
     * {@code RDMA_CM_EVENT_CONNECT_REQUEST}: a listener got a REQ (or a SIDR_REQ for a UD id); the event's
     * {@link CmEvent#id()} is the new id to accept or reject, {@link CmEvent#listenId()} the listener.
     */
    CONNECT_REQUEST,
    /**
     * {@code RDMA_CM_EVENT_CONNECT_RESPONSE}: the active side got the REP but the id has no QP of its own:
     * move the program's QP to RTR and RTS ({@link CmId#initQpAttr}) and call {@link CmId#establish()}.
     */
    CONNECT_RESPONSE,
    /** {@code RDMA_CM_EVENT_CONNECT_ERROR}: the connection could not be set up (moving the QP failed; status -errno). */
    CONNECT_ERROR,
    /**
     * {@code RDMA_CM_EVENT_UNREACHABLE}: the peer's CM did not answer the REQ or REP within the response
     * timeout and max CM retries (status -ETIMEDOUT); for a UD id also a SIDR_REP that refuses (status: the
     * SIDR status, 1 no one serves the port, 2 rejected).
     */
    UNREACHABLE,
    /**
     * {@code RDMA_CM_EVENT_REJECTED}: a REJ came (status: its Reason, IBTA table 112: 8 invalid service ID
     * when no one listens on the port, 28 consumer defined when the peer's program rejected or its backlog
     * was full); the REJ's private data is in the event.
     */
    REJECTED,
    /** {@code RDMA_CM_EVENT_ESTABLISHED}: the connection is up (the RTU came, or the REP on the active side). */
    ESTABLISHED,
    /**
     * {@code RDMA_CM_EVENT_DISCONNECTED}: the connection is down: the peer's DREQ came, or the DREP that
     * answers ours (status -ETIMEDOUT when our DREQ went unanswered).
     */
    DISCONNECTED,
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}: the device (its QP1) went away: the id's QP is in ERROR; close the id. */
    DEVICE_REMOVAL,
    /** {@code RDMA_CM_EVENT_MULTICAST_JOIN}: a join completed: the event has the group's address handle attributes and Q_Key. */
    MULTICAST_JOIN,
    /** {@code RDMA_CM_EVENT_MULTICAST_ERROR}: a join failed (status: a negative errno), or a joined group was lost. */
    MULTICAST_ERROR,
    /** {@code RDMA_CM_EVENT_ADDR_CHANGE}: the address's net device changed (not generated here). */
    ADDR_CHANGE,
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}: the connection's time wait ended: its QP can be reused. */
    TIMEWAIT_EXIT
}

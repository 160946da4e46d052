// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

/** What a {@link CmEvent} reports (rdma_cm's {@code enum rdma_cm_event_type}, same order and values). */
public enum CmEventType {
    /** resolveAddr found a local device for the addresses. */
    ADDR_RESOLVED,
    /** resolveAddr failed: no route (-ENETUNREACH, -EHOSTUNREACH), no device has the source (-ENODEV), ... */
    ADDR_ERROR,
    /** resolveRoute found the path. */
    ROUTE_RESOLVED,
    /** resolveRoute failed. */
    ROUTE_ERROR,
    /** A listener got a connection request; the event's id is the new id to accept or reject. */
    CONNECT_REQUEST,
    /** The active side got a REP but has no QP: it calls {@link CmId#establish()}. */
    CONNECT_RESPONSE,
    /** The connection could not be set up (e.g. moving the QP failed). */
    CONNECT_ERROR,
    /**
     * The peer did not answer within the CM timeouts (status -ETIMEDOUT); for a UD id also a SIDR_REP
     * that refuses (status: the SIDR status, 1 no one serves the port, 2 rejected).
     */
    UNREACHABLE,
    /** The peer rejected (status: the IB REJ reason, 8 when no one listens, 28 when the consumer rejected). */
    REJECTED,
    /** The connection is up. */
    ESTABLISHED,
    /** The connection is down (either side disconnected; status -ETIMEDOUT if the DREQ went unanswered). */
    DISCONNECTED,
    /** The device (its QP1) went away: the id's QP is in ERROR; close the id. */
    DEVICE_REMOVAL,
    /** A multicast join completed: the event has the group's address handle attributes and Q_Key. */
    MULTICAST_JOIN,
    /** A multicast join failed (status: a negative errno), or a joined group was lost. */
    MULTICAST_ERROR,
    /** The address changed (not generated). */
    ADDR_CHANGE,
    /** The connection's time wait ended: its QP can be reused. */
    TIMEWAIT_EXIT
}

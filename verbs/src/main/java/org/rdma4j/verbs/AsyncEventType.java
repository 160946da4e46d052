// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Asynchronous event type, mirroring {@code enum ibv_event_type} (same order and values). The soft
 * device raises CQ_ERR, QP_FATAL, SQ_DRAINED, PORT_ACTIVE, PORT_ERR, SRQ_LIMIT_REACHED and
 * QP_LAST_WQE_REACHED; the native provider passes on whatever the kernel reports (except events of a
 * work queue, which the API does not have).
 */
public enum AsyncEventType {
    /** {@code IBV_EVENT_CQ_ERR}: the CQ overflowed; its QPs move to ERR (S-CQ-3). */
    CQ_ERR,
    /** {@code IBV_EVENT_QP_FATAL}: the QP hit an error it cannot report in a completion and moved to ERR. */
    QP_FATAL,
    /** {@code IBV_EVENT_QP_REQ_ERR}: the QP received an invalid request (transport error) and moved to ERR. */
    QP_REQ_ERR,
    /** {@code IBV_EVENT_QP_ACCESS_ERR}: a peer violated the QP's access rights; it moved to ERR. */
    QP_ACCESS_ERR,
    /** {@code IBV_EVENT_COMM_EST}: the first packet arrived on a QP in RTR. */
    COMM_EST,
    /** {@code IBV_EVENT_SQ_DRAINED}: a QP moved to SQD with notification has no sends in flight (S-QP-6). */
    SQ_DRAINED,
    /** {@code IBV_EVENT_PATH_MIG}: the QP migrated to its alternate path. */
    PATH_MIG,
    /** {@code IBV_EVENT_PATH_MIG_ERR}: path migration failed. */
    PATH_MIG_ERR,
    /** {@code IBV_EVENT_DEVICE_FATAL}: the device failed; close the context. */
    DEVICE_FATAL,
    /** {@code IBV_EVENT_PORT_ACTIVE}: the port became active (S-PORT-1). */
    PORT_ACTIVE,
    /** {@code IBV_EVENT_PORT_ERR}: the port went down (S-PORT-1). */
    PORT_ERR,
    /** {@code IBV_EVENT_LID_CHANGE}: the port's LID changed. */
    LID_CHANGE,
    /** {@code IBV_EVENT_PKEY_CHANGE}: the port's P_Key table changed. */
    PKEY_CHANGE,
    /** {@code IBV_EVENT_SM_CHANGE}: the subnet manager changed. */
    SM_CHANGE,
    /** {@code IBV_EVENT_SRQ_ERR}: the SRQ failed. */
    SRQ_ERR,
    /** {@code IBV_EVENT_SRQ_LIMIT_REACHED}: fewer receives than the armed limit remain (S-SRQ-2). */
    SRQ_LIMIT_REACHED,
    /** {@code IBV_EVENT_QP_LAST_WQE_REACHED}: a QP on an SRQ in ERR will take no more receives from it. */
    QP_LAST_WQE_REACHED,
    /** {@code IBV_EVENT_CLIENT_REREGISTER}: the subnet manager asks clients to register again. */
    CLIENT_REREGISTER,
    /** {@code IBV_EVENT_GID_CHANGE}: the port's GID table changed. */
    GID_CHANGE,
    /** {@code IBV_EVENT_WQ_FATAL}: a work queue failed (the API has no work queues; not delivered). */
    WQ_FATAL;

    /** {@return the numeric value of {@code IBV_EVENT_*}} */
    public int value() {
        return ordinal();
    }
}

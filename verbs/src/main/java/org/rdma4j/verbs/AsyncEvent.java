// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * An asynchronous event ({@code struct ibv_async_event}), from {@link Context#getAsyncEvent}. Exactly
 * one of {@code qp}, {@code cq}, {@code srq} or {@code portNum} is meaningful, depending on the type
 * ({@code element} in C); for DEVICE_FATAL none is. Acknowledge it with {@link Context#ackAsyncEvent}.
 *
 * @param type    {@code event_type}
 * @param qp      the QP of a QP event, else null
 * @param cq      the CQ of CQ_ERR, else null
 * @param srq     the SRQ of an SRQ event, else null
 * @param portNum the port of a port event (from 1), else 0
 */
public record AsyncEvent(AsyncEventType type, QueuePair qp, CompletionQueue cq, SharedReceiveQueue srq,
                         int portNum) {
    /**
     * An event about a QP (for providers).
     *
     * @param type the event type
     * @param qp   the QP
     * @return the event
     */
    public static AsyncEvent ofQp(AsyncEventType type, QueuePair qp) {
        return new AsyncEvent(type, qp, null, null, 0);
    }

    /**
     * An event about a CQ (for providers).
     *
     * @param type the event type
     * @param cq   the CQ
     * @return the event
     */
    public static AsyncEvent ofCq(AsyncEventType type, CompletionQueue cq) {
        return new AsyncEvent(type, null, cq, null, 0);
    }

    /**
     * An event about an SRQ (for providers).
     *
     * @param type the event type
     * @param srq  the SRQ
     * @return the event
     */
    public static AsyncEvent ofSrq(AsyncEventType type, SharedReceiveQueue srq) {
        return new AsyncEvent(type, null, null, srq, 0);
    }

    /**
     * An event about a port (for providers).
     *
     * @param type    the event type
     * @param portNum the port, from 1
     * @return the event
     */
    public static AsyncEvent ofPort(AsyncEventType type, int portNum) {
        return new AsyncEvent(type, null, null, null, portNum);
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * An asynchronous event ({@code struct ibv_async_event}). Exactly one of {@code qp}, {@code cq},
 * {@code srq} or {@code portNum} is meaningful, depending on the type.
 */
public record AsyncEvent(AsyncEventType type, QueuePair qp, CompletionQueue cq, SharedReceiveQueue srq,
                         int portNum) {
    public static AsyncEvent ofQp(AsyncEventType type, QueuePair qp) {
        return new AsyncEvent(type, qp, null, null, 0);
    }

    public static AsyncEvent ofCq(AsyncEventType type, CompletionQueue cq) {
        return new AsyncEvent(type, null, cq, null, 0);
    }

    public static AsyncEvent ofSrq(AsyncEventType type, SharedReceiveQueue srq) {
        return new AsyncEvent(type, null, null, srq, 0);
    }

    public static AsyncEvent ofPort(AsyncEventType type, int portNum) {
        return new AsyncEvent(type, null, null, null, portNum);
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.verbs.AsyncEventType;

/** Where a QP engine reports its asynchronous events (the owning context's event queue). */
public interface AsyncEventSink {
    void qpEvent(AsyncEventType type);
}

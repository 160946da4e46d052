// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.soft.engine.QpEngine;
import org.rdma4j.verbs.QueuePair;

/** For the engine's component tests: the engine behind a soft queue pair. */
public final class EngineAccess {
    private EngineAccess() {
    }

    public static QpEngine engine(QueuePair q) {
        return ((SoftQp) q).engine;
    }
}

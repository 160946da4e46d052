// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Queue pair state, mirroring {@code enum ibv_qp_state}. */
public enum QpState {
    RESET, INIT, RTR, RTS, SQD, SQE, ERR;

    private static final QpState[] VALUES = values();

    public int value() {
        return ordinal();
    }

    public static QpState of(int value) {
        return VALUES[value];
    }
}

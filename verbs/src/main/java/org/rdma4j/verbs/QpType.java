// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Queue pair transport type, mirroring {@code enum ibv_qp_type} (the types rdma4j offers). */
public enum QpType {
    /** {@code IBV_QPT_RC}, reliable connected: every operation, acknowledged and retransmitted. */
    RC(2),
    /** {@code IBV_QPT_UC}, unreliable connected: SEND and WRITE, no acknowledgements (S-DATA-6). */
    UC(3),
    /** {@code IBV_QPT_UD}, unreliable datagram: SENDs of at most the path MTU to any UD QP (S-UD). */
    UD(4);

    private final int value;

    QpType(int value) {
        this.value = value;
    }

    /** {@return the numeric value of {@code IBV_QPT_*}} */
    public int value() {
        return value;
    }
}

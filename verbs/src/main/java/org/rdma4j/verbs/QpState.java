// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Queue pair state, mirroring {@code enum ibv_qp_state} (same order and values). The moves between
 * them are the IBTA state table ({@link org.rdma4j.verbs.spi.QpTransitions}, S-QP-2).
 */
public enum QpState {
    /** {@code IBV_QPS_RESET}: just created or reset; nothing can be posted (S-POST-1). */
    RESET,
    /** {@code IBV_QPS_INIT}: initialised; receives can be posted, nothing is received or sent yet. */
    INIT,
    /** {@code IBV_QPS_RTR}: ready to receive; sends are refused (EINVAL). */
    RTR,
    /** {@code IBV_QPS_RTS}: ready to send: fully working. */
    RTS,
    /** {@code IBV_QPS_SQD}: send queue drained: new sends wait for RTS, receives keep working (S-QP-6). */
    SQD,
    /** {@code IBV_QPS_SQE}: send queue error (UC, UD): receives keep working, the QP can return to RTS. */
    SQE,
    /** {@code IBV_QPS_ERR}: error: every work request completes WR_FLUSH_ERR (S-ERR-9). */
    ERR;

    private static final QpState[] VALUES = values();

    /** {@return the numeric value of {@code IBV_QPS_*}} */
    public int value() {
        return ordinal();
    }

    /**
     * The state of a numeric {@code IBV_QPS_*} value.
     *
     * @param value 0 to 6
     * @return the state
     * @throws ArrayIndexOutOfBoundsException for any other value
     */
    public static QpState of(int value) {
        return VALUES[value];
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Send work request opcode, mirroring {@code enum ibv_wr_opcode}. */
public enum WrOpcode {
    RDMA_WRITE(0, WcOpcode.RDMA_WRITE),
    RDMA_WRITE_WITH_IMM(1, WcOpcode.RDMA_WRITE),
    SEND(2, WcOpcode.SEND),
    SEND_WITH_IMM(3, WcOpcode.SEND),
    RDMA_READ(4, WcOpcode.RDMA_READ),
    ATOMIC_CMP_AND_SWP(5, WcOpcode.COMP_SWAP),
    ATOMIC_FETCH_AND_ADD(6, WcOpcode.FETCH_ADD),
    LOCAL_INV(7, WcOpcode.LOCAL_INV),
    BIND_MW(8, WcOpcode.BIND_MW),
    SEND_WITH_INV(9, WcOpcode.SEND);

    private final int value;
    private final WcOpcode completion;

    WrOpcode(int value, WcOpcode completion) {
        this.value = value;
        this.completion = completion;
    }

    /** The numeric value of {@code IBV_WR_*}. */
    public int value() {
        return value;
    }

    /** The opcode of this request's work completion. */
    public WcOpcode completionOpcode() {
        return completion;
    }

    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    public boolean isSend() {
        return this == SEND || this == SEND_WITH_IMM || this == SEND_WITH_INV;
    }

    public boolean isWrite() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM;
    }

    /** True for operations that are executed locally and put nothing on the wire. */
    public boolean isLocal() {
        return this == LOCAL_INV || this == BIND_MW;
    }
}

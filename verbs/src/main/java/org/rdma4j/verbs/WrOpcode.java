// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Send work request opcode, mirroring {@code enum ibv_wr_opcode}. Which QP types carry which: RC all;
 * UC the SENDs and WRITEs but no READ, atomic or SEND_WITH_INV; UD SEND and SEND_WITH_IMM only
 * ({@link org.rdma4j.verbs.spi.SendWrRules}); anything else is EINVAL at post. The operation methods of
 * {@link SendWorkRequest} set the opcode with what it needs.
 */
public enum WrOpcode {
    /** {@code IBV_WR_RDMA_WRITE}: write the gather list to the peer's memory ({@link SendWorkRequest#write}). */
    RDMA_WRITE(0, WcOpcode.RDMA_WRITE),
    /**
     * {@code IBV_WR_RDMA_WRITE_WITH_IMM}: a WRITE that also consumes a receive
     * ({@link SendWorkRequest#writeWithImm}).
     */
    RDMA_WRITE_WITH_IMM(1, WcOpcode.RDMA_WRITE),
    /** {@code IBV_WR_SEND}: the gather list into the peer's next receive ({@link SendWorkRequest#send()}). */
    SEND(2, WcOpcode.SEND),
    /** {@code IBV_WR_SEND_WITH_IMM}: a SEND with a 32-bit immediate ({@link SendWorkRequest#sendWithImm}). */
    SEND_WITH_IMM(3, WcOpcode.SEND),
    /** {@code IBV_WR_RDMA_READ}: read the peer's memory into the local buffers ({@link SendWorkRequest#read}). */
    RDMA_READ(4, WcOpcode.RDMA_READ),
    /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}: 8-byte compare and swap ({@link SendWorkRequest#compareAndSwap}). */
    ATOMIC_CMP_AND_SWP(5, WcOpcode.COMP_SWAP),
    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}: 8-byte fetch and add ({@link SendWorkRequest#fetchAdd}). */
    ATOMIC_FETCH_AND_ADD(6, WcOpcode.FETCH_ADD),
    /** {@code IBV_WR_LOCAL_INV}: invalidate a local rkey ({@link SendWorkRequest#localInvalidate}). */
    LOCAL_INV(7, WcOpcode.LOCAL_INV),
    /** {@code IBV_WR_BIND_MW}: bind a type-2 memory window ({@link SendWorkRequest#bindMw}). */
    BIND_MW(8, WcOpcode.BIND_MW),
    /**
     * {@code IBV_WR_SEND_WITH_INV}: a SEND that invalidates a peer's rkey
     * ({@link SendWorkRequest#sendWithInvalidate}).
     */
    SEND_WITH_INV(9, WcOpcode.SEND);

    private final int value;
    private final WcOpcode completion;

    WrOpcode(int value, WcOpcode completion) {
        this.value = value;
        this.completion = completion;
    }

    /** {@return the numeric value of {@code IBV_WR_*}} */
    public int value() {
        return value;
    }

    /** {@return the opcode of this request's work completion} */
    public WcOpcode completionOpcode() {
        return completion;
    }

    /** {@return whether this is one of the two 8-byte atomics} */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** {@return whether this is a SEND of any kind (it consumes a receive at the peer)} */
    public boolean isSend() {
        return this == SEND || this == SEND_WITH_IMM || this == SEND_WITH_INV;
    }

    /** {@return whether this is an RDMA WRITE, with or without immediate} */
    public boolean isWrite() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM;
    }

    /** {@return whether the operation is executed locally and puts nothing on the wire (LOCAL_INV, BIND_MW)} */
    public boolean isLocal() {
        return this == LOCAL_INV || this == BIND_MW;
    }
}

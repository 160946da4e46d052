// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Work completion opcode, mirroring {@code enum ibv_wc_opcode}: what a completed request did
 * ({@link WorkCompletion#opcode()}, valid only on success). {@link WrOpcode#completionOpcode()} gives
 * the one of each send opcode.
 */
public enum WcOpcode {
    /** {@code IBV_WC_SEND}: a SEND, SEND_WITH_IMM or SEND_WITH_INV completed at the requester. */
    SEND(0),
    /** {@code IBV_WC_RDMA_WRITE}: an RDMA WRITE (with or without immediate) completed. */
    RDMA_WRITE(1),
    /** {@code IBV_WC_RDMA_READ}: an RDMA READ completed; the data is in the local buffers. */
    RDMA_READ(2),
    /** {@code IBV_WC_COMP_SWAP}: a compare-and-swap completed; the original value is in the local buffer. */
    COMP_SWAP(3),
    /** {@code IBV_WC_FETCH_ADD}: a fetch-and-add completed; the original value is in the local buffer. */
    FETCH_ADD(4),
    /** {@code IBV_WC_BIND_MW}: a memory window bind completed. */
    BIND_MW(5),
    /** {@code IBV_WC_LOCAL_INV}: a local invalidation completed. */
    LOCAL_INV(6),
    /** {@code IBV_WC_RECV}: a receive consumed by a SEND (with immediate or invalidate: see the flags). */
    RECV(128),
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}: a receive consumed by an RDMA WRITE with immediate (S-DATA-3). */
    RECV_RDMA_WITH_IMM(129);

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** {@return the numeric value of {@code IBV_WC_*}} */
    public int value() {
        return value;
    }

    /** {@return whether this completes a receive work request ({@code IBV_WC_RECV} bit set)} */
    public boolean isReceive() {
        return value >= 128;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Work completion opcode, mirroring {@code enum ibv_wc_opcode}. */
public enum WcOpcode {
    SEND(0), RDMA_WRITE(1), RDMA_READ(2), COMP_SWAP(3), FETCH_ADD(4), BIND_MW(5), LOCAL_INV(6),
    RECV(128), RECV_RDMA_WITH_IMM(129);

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** The numeric value of {@code IBV_WC_*}. */
    public int value() {
        return value;
    }

    /** True for completions of receive work requests. */
    public boolean isReceive() {
        return value >= 128;
    }
}

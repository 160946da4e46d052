// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Memory window type, mirroring {@code enum ibv_mw_type}. Type 3 does not exist and is refused. */
public enum MwType {
    /** {@code IBV_MW_TYPE_1}: bound with {@link MemoryWindow#bind}; rkey chosen by the device. */
    TYPE_1(1),
    /**
     * {@code IBV_MW_TYPE_2}: bound with a {@link WrOpcode#BIND_MW} work request carrying a new rkey;
     * invalidated by LOCAL_INV or a peer's SEND_WITH_INV.
     */
    TYPE_2(2);

    private final int value;

    MwType(int value) {
        this.value = value;
    }

    /** {@return the numeric value of {@code IBV_MW_TYPE_*}} */
    public int value() {
        return value;
    }
}

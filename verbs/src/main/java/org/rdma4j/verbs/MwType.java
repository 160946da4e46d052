// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Memory window type, mirroring {@code enum ibv_mw_type}. Type 3 does not exist and is refused. */
public enum MwType {
    /** Bound with {@link MemoryWindow#bind}; rkey chosen by the device. */
    TYPE_1(1),
    /** Bound with a {@link WrOpcode#BIND_MW} work request carrying a new rkey. */
    TYPE_2(2);

    private final int value;

    MwType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }
}

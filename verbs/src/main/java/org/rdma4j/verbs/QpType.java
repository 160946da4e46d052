// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Queue pair transport type, mirroring {@code enum ibv_qp_type}. */
public enum QpType {
    /** Reliable connected. */
    RC(2),
    /** Unreliable connected. */
    UC(3),
    /** Unreliable datagram. */
    UD(4);

    private final int value;

    QpType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }
}

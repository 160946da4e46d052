// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Port state, mirroring {@code enum ibv_port_state}. */
public enum PortState {
    NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER;

    public int value() {
        return ordinal();
    }

    /** The text ibv_devinfo prints, e.g. "PORT_ACTIVE". */
    public String label() {
        return "PORT_" + name();
    }
}

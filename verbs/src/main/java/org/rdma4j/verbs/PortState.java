// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Port state, mirroring {@code enum ibv_port_state} (same order and values). */
public enum PortState {
    /** {@code IBV_PORT_NOP}: no state change. */
    NOP,
    /** {@code IBV_PORT_DOWN}: the link is down; traffic from or to the port fails (S-PORT-2). */
    DOWN,
    /** {@code IBV_PORT_INIT}: the link is up, not yet configured. */
    INIT,
    /** {@code IBV_PORT_ARMED}: configured, about to become active. */
    ARMED,
    /** {@code IBV_PORT_ACTIVE}: working. */
    ACTIVE,
    /** {@code IBV_PORT_ACTIVE_DEFER}: active, deferring to the subnet manager. */
    ACTIVE_DEFER;

    /** {@return the numeric value of {@code IBV_PORT_*}} */
    public int value() {
        return ordinal();
    }

    /** {@return the text ibv_devinfo prints, e.g. "PORT_ACTIVE"} */
    public String label() {
        return "PORT_" + name();
    }
}

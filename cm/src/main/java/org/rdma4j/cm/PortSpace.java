// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import org.rdma4j.cm.wire.ServiceId;
import org.rdma4j.verbs.QpType;

/** rdma_cm's port spaces ({@code enum rdma_port_space}): which service ids an id's ports map to. */
public enum PortSpace {
    /** RDMA_PS_TCP: reliable connected QPs, service id 0x0106_pppp. */
    TCP(ServiceId.PS_TCP, QpType.RC),
    /** RDMA_PS_UDP: unreliable datagram QPs, service id 0x0111_pppp, resolved with SIDR_REQ/SIDR_REP. */
    UDP(ServiceId.PS_UDP, QpType.UD),
    /** RDMA_PS_IB: RC or UD with native IB addressing (not implemented yet). */
    IB(ServiceId.PS_IB, QpType.RC);

    private final int value;
    private final QpType qpType;

    PortSpace(int value, QpType qpType) {
        this.value = value;
        this.qpType = qpType;
    }

    /** {@return the RDMA_PS_* value, the high half of the service id} */
    public int value() {
        return value;
    }

    /** {@return the QP type ids of this port space use} */
    public QpType qpType() {
        return qpType;
    }

    /**
     * {@return the service id of {@code port} in this space}
     *
     * @param port the port
     */
    public long serviceId(int port) {
        return ServiceId.of(value, port);
    }
}

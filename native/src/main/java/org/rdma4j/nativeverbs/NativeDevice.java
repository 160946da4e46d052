// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import org.rdma4j.nativeverbs.abi.DeviceConstants;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/**
 * A libibverbs device ({@code struct ibv_device}), as listed when it was found. The {@code ibv_device}
 * pointer is not kept (it is valid only while a device list is): {@link #open()} finds it again by
 * name. Thread safe (immutable).
 */
public final class NativeDevice implements Device {
    private final String name;
    private final long guid;
    private final int nodeType;
    private final int transportType;

    NativeDevice(String name, long guid, int nodeType, int transportType) {
        this.name = name;
        this.guid = guid;
        this.nodeType = nodeType;
        this.transportType = transportType;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long guid() {
        return guid;
    }

    @Override
    public String provider() {
        return "native";
    }

    /** {@code enum ibv_node_type}: 1 for a channel adapter (CA), 4 for an RNIC. */
    public int nodeType() {
        return nodeType;
    }

    /** ibv_devinfo's "transport" line: the transport name and its value, e.g. "InfiniBand (0)". */
    @Override
    public String transportName() {
        String s = switch (transportType) {
            case DeviceConstants.IBV_TRANSPORT_IB -> "InfiniBand";
            case DeviceConstants.IBV_TRANSPORT_IWARP -> "iWARP";
            case DeviceConstants.IBV_TRANSPORT_USNIC -> "usNIC";
            case DeviceConstants.IBV_TRANSPORT_USNIC_UDP -> "usNIC UDP";
            default -> "invalid transport";
        };
        return s + " (" + transportType + ")";
    }

    @Override
    public Context open() {
        NativeContext c = new NativeContext(this, NativeProvider.open(name));
        NativeLog.opened(this);
        return c;
    }

    @Override
    public String toString() {
        return "native device " + name;
    }
}

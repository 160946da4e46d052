package org.rdma4j.nativeverbs.abi;

/** Struct layouts of verbs.h for devices, ports, GIDs, PDs, MRs, MWs, channels and events (checked by the layout probe). */
public final class DeviceLayouts {
    private DeviceLayouts() {}
}

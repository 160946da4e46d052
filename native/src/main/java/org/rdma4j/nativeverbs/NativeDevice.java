package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/** A libibverbs device ({@code struct ibv_device}). Thread safe. */
public final class NativeDevice implements Device {
    private final String name;
    private final long guid;
    private final String transportName;

    NativeDevice(String name, long guid, String transportName) {
        this.name = name;
        this.guid = guid;
        this.transportName = transportName;
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

    @Override
    public String transportName() {
        return transportName;
    }

    @Override
    public Context open() {
        return new NativeContext(this, MemorySegment.NULL);
    }

    @Override
    public String toString() {
        return "native device " + name;
    }
}

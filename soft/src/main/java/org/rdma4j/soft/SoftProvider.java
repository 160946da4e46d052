package org.rdma4j.soft;

import java.util.List;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.spi.VerbsProvider;

/** The soft provider: always available, no hardware, no kernel module, no privileges. */
public final class SoftProvider implements VerbsProvider {
    @Override
    public String name() {
        return "soft";
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public Throwable unavailabilityCause() {
        return null;
    }

    @Override
    public List<Device> devices() {
        return SoftDevices.all();
    }
}

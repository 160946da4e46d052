// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.util.List;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.spi.VerbsProvider;

/** The soft provider: always available, no hardware, no kernel module, no privileges. */
public final class SoftProvider implements VerbsProvider {
    @Override
    public String name() {
        return "soft";
    }

    @Override
    public List<Device> devices() {
        return SoftDevices.all();
    }

    /** The device a {@code soft[:loopback|udp]?...} spec describes (see {@link SoftDeviceSpecs}). */
    @Override
    public Device createDevice(DeviceSpec spec) {
        return SoftDeviceSpecs.create(spec);
    }

    /** {@link SoftDevices#remove}: EBUSY while a context is open, EINVAL for soft0. */
    @Override
    public void removeDevice(Device device) {
        SoftDevices.remove(device);
    }
}

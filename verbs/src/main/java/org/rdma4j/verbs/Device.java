// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * An RDMA device ({@code struct ibv_device}), found by {@link Verbs#devices()} or made by
 * {@link Verbs#createDevice(String)}. Opening it gives a {@link Context}, the parent of every other
 * resource; a device may be opened any number of times, and its contexts are independent. Thread safe.
 */
public interface Device {
    /**
     * {@code ibv_get_device_name}.
     *
     * @return the device name, unique among the devices listed, e.g. "soft0" or "mlx5_0"
     */
    String name();

    /**
     * {@code ibv_get_device_guid}.
     *
     * @return the node GUID as a number: the 8 bytes of the (big-endian) GUID read as a big-endian
     *     {@code long} ({@code be64toh} of what the C call returns), the value ibv_devices prints with
     *     {@code %016x}
     */
    long guid();

    /**
     * The provider that offers the device (rdma4j's own).
     *
     * @return the provider's {@link org.rdma4j.verbs.spi.VerbsProvider#name()}, e.g. "soft" or "native"
     */
    String provider();

    /**
     * The transport line ibv_devinfo prints ({@code ibv_node_type_str} of {@code transport_type}).
     *
     * @return e.g. "InfiniBand (0)", which RoCE devices report too; the default
     */
    default String transportName() {
        return "InfiniBand (0)";
    }

    /**
     * {@code ibv_open_device}: opens the device.
     *
     * @return a new context; close it ({@code ibv_close_device}) when done
     * @throws VerbsException with the provider's errno when the device cannot be opened
     */
    Context open();
}

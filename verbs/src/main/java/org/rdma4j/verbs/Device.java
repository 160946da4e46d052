// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** An RDMA device ({@code struct ibv_device}), found by {@link Verbs#devices()}. Thread safe. */
public interface Device {
    /** The device name, e.g. "soft0" or "mlx5_0". */
    String name();

    /** The node GUID, as {@code ibv_get_device_guid} returns it (host order value of the big-endian GUID). */
    long guid();

    /** The provider that offers the device, e.g. "soft" or "native". */
    String provider();

    /** The transport name ibv_devinfo prints, e.g. "InfiniBand (0)". */
    default String transportName() {
        return "InfiniBand (0)";
    }

    /** Opens the device ({@code ibv_open_device}). */
    Context open();
}

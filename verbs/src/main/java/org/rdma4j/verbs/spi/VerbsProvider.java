// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.List;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * A source of RDMA devices, found with {@link java.util.ServiceLoader}. Like Netty's
 * {@code Epoll.isAvailable()/unavailabilityCause()/ensureAvailability()}: a provider that cannot work
 * here (no native library, no kernel module) is still found, says so, and says why, so that
 * {@link org.rdma4j.verbs.Verbs} can tell a user who asks for one of its devices what is missing.
 * Implementations are thread safe.
 */
public interface VerbsProvider {
    /**
     * The provider's short name, unique among providers.
     *
     * @return e.g. "soft" or "native"; the provider part of a {@link DeviceSpec}
     */
    String name();

    /**
     * Whether the provider works in this process (its devices can be listed and opened).
     *
     * @return true when {@link #unavailabilityCause()} is null (the default)
     */
    default boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /**
     * Why the provider cannot work here.
     *
     * @return the cause (e.g. an {@link UnsatisfiedLinkError} naming a missing library), or null when it
     *     can work (the default: nothing it needs is missing)
     */
    default Throwable unavailabilityCause() {
        return null;
    }

    /**
     * Returns if the provider is available, else throws.
     *
     * @throws VerbsException ENODEV naming the provider, with {@link #unavailabilityCause()} as its cause
     */
    default void ensureAvailability() {
        if (!isAvailable()) {
            Throwable cause = unavailabilityCause();
            throw new VerbsException(Errno.ENODEV, "provider '" + name() + "' is unavailable: "
                    + (cause == null ? "no reason given" : cause), cause);
        }
    }

    /**
     * The provider's devices: {@code ibv_get_device_list} restricted to this provider.
     *
     * @return the devices (empty when unavailable)
     */
    List<Device> devices();

    /**
     * Creates (or attaches to) a device described by {@code spec}, whose {@link DeviceSpec#provider()}
     * is this provider's name; the provider defines the kinds and options it reads. Called only when
     * the provider is available. By default a provider creates no devices.
     *
     * @param spec the device to create
     * @return the new device, listed by {@link #devices()} from now on
     *
     * @throws VerbsException EOPNOTSUPP if the provider creates no devices, EINVAL for a kind or option it
     *     does not know or a value out of range, or the errno of what failed (EEXIST, EADDRINUSE, ...)
     */
    default Device createDevice(DeviceSpec spec) {
        throw new VerbsException(Errno.EOPNOTSUPP, "provider '" + name() + "' does not create devices ("
                + spec + ")");
    }

    /**
     * Removes a device {@link #createDevice} made. By default a provider removes none.
     *
     * @param device the device
     *
     * @throws VerbsException EOPNOTSUPP if the provider removes no devices, EBUSY while a context on it is
     *     open, EINVAL for a device the provider did not create
     */
    default void removeDevice(Device device) {
        throw new VerbsException(Errno.EOPNOTSUPP, "provider '" + name() + "' does not remove devices");
    }
}

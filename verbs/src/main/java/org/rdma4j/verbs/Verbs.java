// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.StringJoiner;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * Entry point: device discovery and creation across every provider found by {@link ServiceLoader}.
 * A provider that is present but cannot work here (see {@link VerbsProvider#isAvailable()}) lists no
 * devices, and asking for a device that is not found says which providers were tried and why each
 * unavailable one is. Thread safe.
 * {@snippet :
 * for (Device d : Verbs.devices()) System.out.println(d.name());
 * try (Context ctx = Verbs.open("soft0")) { ... }
 * Device udp = Verbs.createDevice("soft:udp?addr=192.0.2.1"); // provider-neutral: no compile dependency
 * }
 */
public final class Verbs {
    private static final Version VERSION = VersionResource.load();

    private Verbs() {}

    /**
     * The version of rdma4j this class belongs to, as the build that made it recorded: the Maven version
     * (the {@code Implementation-Version} of the jars' manifests) and the git commit it was built from.
     * {@snippet :
     * System.out.println("rdma4j " + Verbs.version());   // rdma4j 0.1.0 (commit 0b57a51c2d3e)
     * }
     *
     * @return the version and commit; either is "unknown" when the classes were not built by the
     *     project's Maven build (the commit also when it was built outside a git repository)
     */
    public static Version version() {
        return VERSION;
    }

    /**
     * A build of rdma4j.
     *
     * @param version the Maven version of the project, e.g. {@code 0.1.0} or {@code 0.1.0-SNAPSHOT}
     * @param commit the abbreviated git commit it was built from, with {@code -dirty} when the work
     *     tree had uncommitted changes, or "unknown"
     */
    public record Version(String version, String commit) {
        /** {@return the version, then the commit in parentheses: {@code 0.1.0 (commit 0b57a51c2d3e)}} */
        @Override
        public String toString() {
            return version + " (commit " + commit + ")";
        }
    }

    /**
     * Every provider on the module or class path, available or not, found afresh with
     * {@link ServiceLoader} at each call. rdma4j's own: libibverbs loads its providers itself.
     *
     * @return the providers, in service-loader order (a new, modifiable list)
     */
    public static List<VerbsProvider> providers() {
        List<VerbsProvider> list = new ArrayList<>();
        ServiceLoader.load(VerbsProvider.class, Verbs.class.getClassLoader()).forEach(list::add);
        return list;
    }

    /**
     * The provider called {@code name}, available or not.
     *
     * @param name the provider's {@link VerbsProvider#name()}, e.g. "soft" or "native"
     * @return the provider
     * @throws VerbsException ENODEV naming the providers that were found
     */
    public static VerbsProvider provider(String name) {
        return provider(name, providers());
    }

    /**
     * {@code ibv_get_device_list}: the devices of every available provider. An unavailable provider
     * contributes none and is not an error (as libibverbs skips a driver that does not load).
     *
     * @return the devices, grouped by provider in {@link #providers()} order (a new, modifiable list;
     *     empty when there are none)
     */
    public static List<Device> devices() {
        return devices(providers());
    }

    /**
     * The device called {@code name}: {@code ibv_get_device_list} followed by a search by
     * {@code ibv_get_device_name}.
     *
     * @param name the device name, e.g. "soft0" or "mlx5_0"
     * @return the device
     * @throws VerbsException ENODEV if there is none; the message names every provider tried, its
     *     devices or why it is unavailable, and each unavailability cause is attached as a suppressed
     *     exception
     */
    public static Device device(String name) {
        return device(name, providers());
    }

    /**
     * The first device of the first available provider, as a program that takes
     * {@code ibv_get_device_list()[0]}.
     *
     * @return the device
     * @throws VerbsException ENODEV, explained as for {@link #device(String)}, when there is no device
     */
    public static Device firstDevice() {
        List<VerbsProvider> all = providers();
        List<Device> devices = devices(all);
        if (devices.isEmpty()) {
            throw noDevice("no RDMA devices found", all);
        }
        return devices.getFirst();
    }

    /**
     * Opens the device called {@code name}: {@link #device(String)} then {@link Device#open()}
     * ({@code ibv_open_device}).
     *
     * @param name the device name
     * @return a new context; close it with {@link Context#close()} ({@code ibv_close_device})
     * @throws VerbsException ENODEV as for {@link #device(String)}, or what the provider's open throws
     */
    public static Context open(String name) {
        return device(name).open();
    }

    /**
     * Creates a device from a spec, {@code provider[:kind][?key=value&...]} (see {@link DeviceSpec}).
     * rdma4j's own (libibverbs devices come from the kernel): for example a soft device on a UDP
     * socket, {@code "soft:udp?addr=192.0.2.1"}. The device is listed by {@link #devices()} until
     * {@link #removeDevice} removes it.
     *
     * @param spec the spec's text form
     * @return the new device
     * @throws VerbsException EINVAL for a malformed spec; ENODEV if the provider is missing or unavailable
     *     (with the cause); otherwise what the provider's {@link VerbsProvider#createDevice} throws
     */
    public static Device createDevice(String spec) {
        return createDevice(DeviceSpec.parse(spec));
    }

    /**
     * As {@link #createDevice(String)}, from a parsed spec.
     *
     * @param spec the spec
     * @return the new device
     * @throws VerbsException ENODEV if the provider is missing or unavailable (with the cause);
     *     otherwise what the provider's {@link VerbsProvider#createDevice} throws
     */
    public static Device createDevice(DeviceSpec spec) {
        return createDevice(spec, providers());
    }

    /**
     * Removes a device made by {@link #createDevice}; its contexts must be closed.
     *
     * @param device the device to remove
     * @throws VerbsException EBUSY while a context is open; ENODEV if its provider is gone
     */
    public static void removeDevice(Device device) {
        provider(device.provider()).removeDevice(device);
    }

    static VerbsProvider provider(String name, List<VerbsProvider> providers) {
        for (VerbsProvider p : providers) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        StringJoiner found = new StringJoiner(", ");
        providers.forEach(p -> found.add(p.name()));
        throw new VerbsException(Errno.ENODEV, "no RDMA provider named '" + name + "' (found: "
                + (providers.isEmpty() ? "none" : found) + ")");
    }

    static List<Device> devices(List<VerbsProvider> providers) {
        List<Device> list = new ArrayList<>();
        for (VerbsProvider p : providers) {
            if (p.isAvailable()) {
                list.addAll(p.devices());
            }
        }
        return list;
    }

    static Device device(String name, List<VerbsProvider> providers) {
        for (Device d : devices(providers)) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw noDevice("no RDMA device named '" + name + "'", providers);
    }

    static Device createDevice(DeviceSpec spec, List<VerbsProvider> providers) {
        VerbsProvider p = provider(spec.provider(), providers);
        p.ensureAvailability();
        return p.createDevice(spec);
    }

    /** ENODEV saying what was asked, then each provider tried: its devices, or why it is unavailable. */
    static VerbsException noDevice(String what, List<VerbsProvider> providers) {
        if (providers.isEmpty()) {
            return new VerbsException(Errno.ENODEV, what + ": no RDMA provider on the module or class path");
        }
        StringJoiner tried = new StringJoiner("; ", what + "; providers tried: ", "");
        List<Throwable> causes = new ArrayList<>();
        for (VerbsProvider p : providers) {
            if (p.isAvailable()) {
                StringJoiner names = new StringJoiner(", ");
                p.devices().forEach(d -> names.add(d.name()));
                tried.add(p.name() + " (available, devices: " + (names.length() == 0 ? "none" : names) + ")");
            } else {
                Throwable cause = p.unavailabilityCause();
                tried.add(p.name() + " (unavailable: " + (cause == null ? "no reason given"
                        : cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName()) + ")");
                if (cause != null) {
                    causes.add(cause);
                }
            }
        }
        VerbsException e = new VerbsException(Errno.ENODEV, tried.toString());
        causes.forEach(e::addSuppressed);
        return e;
    }
}

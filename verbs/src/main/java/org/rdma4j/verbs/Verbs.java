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
    private Verbs() {}

    /** Every provider on the module or class path, available or not. */
    public static List<VerbsProvider> providers() {
        List<VerbsProvider> list = new ArrayList<>();
        ServiceLoader.load(VerbsProvider.class, Verbs.class.getClassLoader()).forEach(list::add);
        return list;
    }

    /**
     * The provider called {@code name}, available or not.
     *
     * @throws VerbsException ENODEV naming the providers that were found
     */
    public static VerbsProvider provider(String name) {
        return provider(name, providers());
    }

    /** {@code ibv_get_device_list}: the devices of every available provider. */
    public static List<Device> devices() {
        return devices(providers());
    }

    /**
     * The device called {@code name}.
     *
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

    /** Opens the device called {@code name}. */
    public static Context open(String name) {
        return device(name).open();
    }

    /**
     * Creates a device from a spec, {@code provider[:kind][?key=value&...]} (see {@link DeviceSpec}).
     *
     * @throws VerbsException EINVAL for a malformed spec; ENODEV if the provider is missing or unavailable
     *     (with the cause); otherwise what the provider's {@link VerbsProvider#createDevice} throws
     */
    public static Device createDevice(String spec) {
        return createDevice(DeviceSpec.parse(spec));
    }

    /** As {@link #createDevice(String)}, from a parsed spec. */
    public static Device createDevice(DeviceSpec spec) {
        return createDevice(spec, providers());
    }

    /**
     * Removes a device made by {@link #createDevice}; its contexts must be closed.
     *
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

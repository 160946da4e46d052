package org.rdma4j.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * Entry point: device discovery across every provider found by {@link ServiceLoader}.
 * {@snippet :
 * for (Device d : Verbs.devices()) System.out.println(d.name());
 * try (Context ctx = Verbs.open("soft0")) { ... }
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

    /** {@code ibv_get_device_list}: the devices of every available provider. */
    public static List<Device> devices() {
        List<Device> list = new ArrayList<>();
        for (VerbsProvider p : providers()) {
            if (p.isAvailable()) {
                list.addAll(p.devices());
            }
        }
        return list;
    }

    /** The device called {@code name}; ENODEV if there is none. */
    public static Device device(String name) {
        for (Device d : devices()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw new VerbsException(Errno.ENODEV, "no RDMA device named '" + name + "'");
    }

    /** Opens the device called {@code name}. */
    public static Context open(String name) {
        return device(name).open();
    }
}

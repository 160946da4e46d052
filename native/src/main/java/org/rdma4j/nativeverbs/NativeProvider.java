// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.rdma4j.nativeverbs.abi.DeviceConstants;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * The "native" provider: the host's RDMA devices (NICs, rxe, siw) through libibverbs. Unavailable,
 * with a cause that says what to do ({@link NativeVerbs#unavailabilityCause()}), when the library is
 * missing, native access is denied, {@code -Drdma4j.native=false} is set, or libibverbs lists no
 * device. Thread safe.
 */
public final class NativeProvider implements VerbsProvider {
    /** The system property that turns the provider off when "false". */
    public static final String ENABLE_PROPERTY = "rdma4j.native";

    private static final long DEVICE_NODE_TYPE = offset(DeviceLayouts.ibv_device, "node_type");
    private static final long DEVICE_TRANSPORT_TYPE = offset(DeviceLayouts.ibv_device, "transport_type");

    /** Public for {@link java.util.ServiceLoader}. */
    public NativeProvider() {}

    @Override
    public String name() {
        return "native";
    }

    @Override
    public Throwable unavailabilityCause() {
        return cause();
    }

    @Override
    public List<Device> devices() {
        if (libraryCause() != null) {
            return List.of();
        }
        try {
            return withDeviceList(NativeProvider::describe);
        } catch (VerbsException e) {
            return List.of();
        }
    }

    /** Why the library cannot be used at all (never the device count), or null. */
    static Throwable libraryCause() {
        if ("false".equalsIgnoreCase(System.getProperty(ENABLE_PROPERTY))) {
            return new UnsupportedOperationException("disabled by -D" + ENABLE_PROPERTY + "=false");
        }
        Throwable t = Ibv.UNAVAILABLE;
        if (t == null) {
            return null;
        }
        if (!Ibv.LIBIBVERBS.isAvailable()) {
            return new UnsatisfiedLinkError(Ibv.LIBRARY + " not found: apt-get install libibverbs1 ("
                    + t.getMessage() + ")");
        }
        return t;
    }

    /** The provider's unavailability cause, looked at now (devices may come and go). */
    static Throwable cause() {
        Throwable t = libraryCause();
        if (t != null) {
            return t;
        }
        int n;
        try {
            n = withDeviceList(List::size);
        } catch (VerbsException e) {
            return new IllegalStateException("no RDMA devices: is a NIC or rxe configured? see `rdma link` ("
                    + e.getMessage() + ")", e);
        }
        return n == 0 ? new IllegalStateException("no RDMA devices: is a NIC or rxe configured? see `rdma link`")
                : null;
    }

    /**
     * Runs {@code f} on the current device list (ibv_get_device_list) and frees it. The list's
     * {@code struct ibv_device *} entries are valid only inside {@code f}.
     */
    static <T> T withDeviceList(Function<List<MemorySegment>, T> f) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = Downcalls.create(() -> "ibv_get_device_list", () -> { },
                    e -> (MemorySegment) Ibv.ibv_get_device_list.invokeExact(e, count));
            try {
                int n = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment entries = Native.at(list, (long) n * ValueLayout.ADDRESS.byteSize());
                List<MemorySegment> devices = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    devices.add(Native.at(entries.getAtIndex(ValueLayout.ADDRESS, i),
                            DeviceLayouts.ibv_device.byteSize()));
                }
                return f.apply(devices);
            } finally {
                Ibv.ibv_free_device_list.invokeExact(list);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    private static List<Device> describe(List<MemorySegment> devices) {
        List<Device> list = new ArrayList<>(devices.size());
        for (MemorySegment d : devices) {
            list.add(describe(d));
        }
        return List.copyOf(list);
    }

    /** The device a {@code struct ibv_device *} names (for a context librdmacm opened). */
    static NativeDevice describe(MemorySegment d) {
        try {
            String name = Native.string((MemorySegment) Ibv.ibv_get_device_name.invokeExact(d),
                    DeviceConstants.IBV_SYSFS_NAME_MAX);
            long guid = Long.reverseBytes((long) Ibv.ibv_get_device_guid.invokeExact(d)); // __be64 -> host
            return new NativeDevice(name, guid, d.get(ValueLayout.JAVA_INT, DEVICE_NODE_TYPE),
                    d.get(ValueLayout.JAVA_INT, DEVICE_TRANSPORT_TYPE));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Opens the device called {@code name} (ibv_open_device); ENODEV if it is gone. */
    static MemorySegment open(String name) {
        if (libraryCause() != null) {
            throw new VerbsException(Errno.ENODEV, "native device " + name + ": provider unavailable: "
                    + libraryCause().getMessage(), libraryCause());
        }
        return withDeviceList(devices -> {
            for (MemorySegment d : devices) {
                if (describe(d).name().equals(name)) {
                    return Downcalls.create(() -> "ibv_open_device(" + name + ")", () -> { },
                            e -> (MemorySegment) Ibv.ibv_open_device.invokeExact(e, d));
                }
            }
            throw new VerbsException(Errno.ENODEV, "native device " + name + " is gone");
        });
    }
}

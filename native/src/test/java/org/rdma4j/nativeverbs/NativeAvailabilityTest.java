// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * What the provider says about itself on the machine the test runs on: the build host (libibverbs,
 * no device), a machine without libibverbs, or the interop VM (rxe0).
 */
class NativeAvailabilityTest {
    private static List<String> sysfsDevices() throws IOException {
        Path dir = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void causeSaysWhatToDoOnThisMachine() throws IOException {
        NativeProvider p = new NativeProvider();
        assertEquals("native", p.name());
        Throwable cause = p.unavailabilityCause();
        if (!Ibv.LIBIBVERBS.isAvailable()) {
            assertTrue(cause.getMessage().startsWith("libibverbs.so.1 not found: apt-get install libibverbs1"),
                    cause.getMessage());
        } else if (sysfsDevices().isEmpty()) {
            assertTrue(cause.getMessage().startsWith("no RDMA devices: is a NIC or rxe configured? see `rdma link`"),
                    String.valueOf(cause));
            assertFalse(p.isAvailable());
            assertFalse(NativeVerbs.isAvailable());
            assertEquals(List.of(), p.devices());
            VerbsException e = assertThrows(VerbsException.class, NativeVerbs::ensureAvailability);
            assertEquals(Errno.ENODEV, e.errno());
        } else {
            assertNull(cause, "devices in sysfs " + sysfsDevices());
            assertTrue(NativeVerbs.isAvailable());
            assertEquals(sysfsDevices(), p.devices().stream().map(Device::name).sorted().toList());
            for (Device d : p.devices()) {
                assertEquals("native", d.provider());
                assertTrue(d.transportName().matches("[A-Za-z ]+ \\(-?\\d\\)"), d.transportName());
            }
        }
    }

    @Test
    void theSystemPropertyTurnsItOff() {
        String old = System.getProperty(NativeProvider.ENABLE_PROPERTY);
        System.setProperty(NativeProvider.ENABLE_PROPERTY, "false");
        try {
            NativeProvider p = new NativeProvider();
            assertEquals("disabled by -Drdma4j.native=false", p.unavailabilityCause().getMessage());
            assertEquals(List.of(), p.devices());
            VerbsException e = assertThrows(VerbsException.class, p::ensureAvailability);
            assertEquals(Errno.ENODEV, e.errno());
            assertTrue(e.getMessage().contains("disabled by -Drdma4j.native=false"), e.getMessage());
        } finally {
            if (old == null) {
                System.clearProperty(NativeProvider.ENABLE_PROPERTY);
            } else {
                System.setProperty(NativeProvider.ENABLE_PROPERTY, old);
            }
        }
    }

    @Test
    void foundByServiceLoaderAndHarmlessWhenUnavailable() throws IOException {
        VerbsProvider p = Verbs.provider("native");
        assertTrue(p instanceof NativeProvider);
        List<String> names = Verbs.devices().stream().filter(d -> d.provider().equals("native"))
                .map(Device::name).sorted().toList();
        assertEquals(p.isAvailable() ? sysfsDevices() : List.of(), names);
        if (!p.isAvailable()) {
            VerbsException e = assertThrows(VerbsException.class, () -> Verbs.device("rxe0"));
            assertEquals(Errno.ENODEV, e.errno());
            assertTrue(e.getMessage().contains("native (unavailable: "), e.getMessage());
        }
    }
}

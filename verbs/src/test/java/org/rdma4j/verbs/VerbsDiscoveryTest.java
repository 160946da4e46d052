// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.spi.VerbsProvider;

/** Verbs finds providers with ServiceLoader (two test providers are registered) and explains what is missing. */
class VerbsDiscoveryTest {
    @Test
    void everyProviderIsFoundAvailableOrNot() {
        List<String> names = Verbs.providers().stream().map(VerbsProvider::name).toList();
        assertTrue(names.containsAll(List.of("fake", "broken")), names.toString());
        assertFalse(Verbs.provider("broken").isAvailable());
        assertSame(TestProviders.Unavailable.CAUSE, Verbs.provider("broken").unavailabilityCause());
    }

    @Test
    void devicesListsOnlyAvailableProviders() {
        // the unavailable provider's devices() throws: it must not even be asked
        assertEquals("fake0", Verbs.device("fake0").name());
        assertTrue(Verbs.devices().stream().allMatch(d -> d.provider().equals("fake")));
    }

    @Test
    void enodevNamesEveryProviderTriedAndWhyEachIsUnavailable() {
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.device("mlx5_0"));
        assertEquals(Errno.ENODEV, e.errno());
        String m = e.getMessage();
        assertTrue(m.startsWith("ENODEV: no RDMA device named 'mlx5_0'; providers tried: "), m);
        assertTrue(m.contains("fake (available, devices: fake0"), m);
        assertTrue(m.contains("broken (unavailable: libfakeverbs.so.1: cannot open"), m);
        assertFalse(m.contains("java.lang."), "what failed in words, not a Java class name: " + m);
        assertArrayEquals(new Throwable[] {TestProviders.Unavailable.CAUSE}, e.getSuppressed());
    }

    @Test
    void noProvidersAtAllIsSaidSo() {
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.device("soft0", List.of()));
        assertEquals("ENODEV: no RDMA device named 'soft0': no RDMA provider on the module or class path",
                e.getMessage());
    }

    @Test
    void ensureAvailabilityThrowsEnodevWithTheCause() {
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.provider("broken").ensureAvailability());
        assertEquals(Errno.ENODEV, e.errno());
        assertSame(TestProviders.Unavailable.CAUSE, e.getCause());
        Verbs.provider("fake").ensureAvailability();
    }

    @Test
    void anUnknownProviderNamesTheOnesFound() {
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.provider("native"));
        assertEquals(Errno.ENODEV, e.errno());
        assertTrue(e.getMessage().contains("no RDMA provider named 'native' (found: "), e.getMessage());
        assertTrue(e.getMessage().contains("fake") && e.getMessage().contains("broken"), e.getMessage());
    }

    @Test
    void aDeviceIsCreatedAndRemovedThroughTheSpec() {
        Device d = Verbs.createDevice("fake:loop?name=fake7");
        try {
            assertEquals("fake7", d.name());
            assertSame(d, Verbs.device("fake7"));
        } finally {
            Verbs.removeDevice(d);
        }
        assertThrows(VerbsException.class, () -> Verbs.device("fake7"));
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> Verbs.createDevice("fake:other")).errno());
    }

    @Test
    void creatingOnAnUnavailableProviderFailsWithItsCause() {
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.createDevice("broken:any?x=1"));
        assertEquals(Errno.ENODEV, e.errno());
        assertSame(TestProviders.Unavailable.CAUSE, e.getCause());
        assertEquals(Errno.ENODEV, assertThrows(VerbsException.class, () -> Verbs.createDevice("native")).errno());
    }

    @Test
    void aProviderThatCreatesNothingSaysEopnotsupp() {
        VerbsProvider plain = new VerbsProvider() {
            public String name() { return "plain"; }
            public List<Device> devices() { return List.of(); }
        };
        assertEquals(Errno.EOPNOTSUPP, assertThrows(VerbsException.class,
                () -> Verbs.createDevice(DeviceSpec.parse("plain"), List.of(plain))).errno());
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/** Soft devices made through the provider-neutral Verbs.createDevice(spec). */
class DeviceSpecTest {
    @Test
    void aLoopbackSpecMakesAListedDeviceThatRemoveDeviceTakesAway() {
        Device d = Verbs.createDevice("soft:loopback?name=spec-loop");
        assertEquals("soft", d.provider());
        assertEquals(d, Verbs.device("spec-loop"));
        try (Context c = d.open()) {
            c.allocPd().close();
        }
        Verbs.removeDevice(d);
        assertEquals(Errno.ENODEV, assertThrows(VerbsException.class, () -> Verbs.device("spec-loop")).errno());
    }

    @Test
    void devicesOnANamedFabricShareItAndItGoesWithTheLast() throws Exception {
        Device a = Verbs.createDevice("soft?name=spec-fab-a&fabric=spec-f1");
        Device b = Verbs.createDevice("soft:loopback?name=spec-fab-b&fabric=spec-f1");
        Device other = Verbs.createDevice("soft:loopback?name=spec-fab-c&fabric=spec-f2");
        try (Context cb = b.open(); Context cc = other.open()) {
            Gid gb = cb.queryGid(1, 1);
            assertTrue(SoftDevices.namedFabric("spec-f1").isAttached(gb), "b is on spec-f1");
            assertFalse(SoftDevices.namedFabric("spec-f2").isAttached(gb), "b is not on spec-f2");
            assertNotSame(SoftDevices.namedFabric("spec-f1"), SoftDevices.namedFabric("spec-f2"));
        }
        Verbs.removeDevice(a);
        assertNotNull(SoftDevices.namedFabric("spec-f1"), "b still holds the fabric");
        Verbs.removeDevice(b);
        Verbs.removeDevice(other);
        assertNull(SoftDevices.namedFabric("spec-f1"));
        assertNull(SoftDevices.namedFabric("spec-f2"));
    }

    @Test
    void faultOptionsPutAFaultyLinkInFrontWhoseCountersTheDeviceShows() {
        Device d = Verbs.createDevice("soft:loopback?name=spec-lossy&fabric=spec-lossy&loss=1&seed=7");
        try (Context c = d.open()) {
            Map<String, Long> counters = c.counters(1);
            assertEquals(0L, counters.get("fault_lost"));
            assertEquals(0L, counters.get("fault_corrupted"));
        } finally {
            Verbs.removeDevice(d);
        }
        Device plain = Verbs.createDevice("soft:loopback?name=spec-plain");
        try (Context c = plain.open()) {
            assertNull(c.counters(1).get("fault_lost"), "no fault options, no faulty link");
        } finally {
            Verbs.removeDevice(plain);
        }
    }

    @Test
    void aUdpSpecBindsTheAddressAsGidIndexOne() throws Exception {
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        int port = SoftDevices.freeUdpPort(25791, lo);
        Device d = Verbs.createDevice("soft:udp?addr=127.0.0.1&port=" + port + "&mode=channel");
        try (Context c = d.open()) {
            assertTrue(d.name().startsWith("udp"), d.name());
            assertEquals(Gid.of(lo), c.queryGid(1, 1));
        } finally {
            Verbs.removeDevice(d);
        }
    }

    @Test
    void badSpecsAreEinvalAndSayWhy() {
        String[][] cases = {
            {"soft:tcp", "unknown kind 'tcp'"},
            {"soft:loopback?nmae=x", "unknown option 'nmae'"},
            {"soft:udp?mode=raw", "needs addr="},
            {"soft:udp?addr=127.0.0.1&mode=fast", "mode=fast is not one of"},
            {"soft:udp?addr=127.0.0.1&port=70000", "port=70000 is not a UDP port"},
            {"soft:udp?addr=example.org", "is not an IPv4 or IPv6 address"},
            {"soft?name=spec-bad&loss=2", "loss=2 is not a probability"},
            {"soft?name=spec-bad&loss=0.1&seed=x", "seed=x is not a whole number"},
        };
        for (String[] c : cases) {
            VerbsException e = assertThrows(VerbsException.class, () -> Verbs.createDevice(c[0]), c[0]);
            assertEquals(Errno.EINVAL, e.errno(), c[0]);
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
        }
        assertTrue(Verbs.devices().stream().noneMatch(x -> x.name().equals("spec-bad")));
    }

    @Test
    void aTakenNameIsEexist() {
        assertEquals(Errno.EEXIST, assertThrows(VerbsException.class,
                () -> Verbs.createDevice("soft?name=soft0")).errno());
    }
}

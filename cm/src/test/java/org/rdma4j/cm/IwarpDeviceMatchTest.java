// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * An address no GID matches goes to an iWARP device's own connection manager (an iWARP GID is a MAC
 * address, so only librdmacm knows which net device, and so which device, has the address); when that
 * CM refuses the bind, the id is the engine's again.
 */
class IwarpDeviceMatchTest {
    /** An address no device of the test JVM has. */
    private static final InetSocketAddress SIW_ADDR = new InetSocketAddress(addr("10.79.0.1"), 7400);

    private static InetAddress addr(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    @AfterEach
    void noIwarpDevice() {
        FakeIwarpProvider.cm = null;
        CmEngine.INSTANCE.devices.devicesForResolve(true); // forget the stand-in device
    }

    @Test
    void anAddressNoGidHasIsBoundThroughTheIwarpDevicesCm() {
        ProviderCmIdTest.FakeProvider provider = new ProviderCmIdTest.FakeProvider();
        FakeIwarpProvider.cm = provider;
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.bindAddr(SIW_ADDR);
            assertNotNull(id.provider, "the id went to the iWARP device's CM");
            assertEquals(1, provider.made.size());
            assertSame(provider.made.get(0), id.provider.providerId());
            assertEquals(List.of("bind 7400"), provider.made.get(0).calls);
        }
    }

    @Test
    void aResolveWithNoMatchingGidGoesToTheIwarpDevicesCm() {
        ProviderCmIdTest.FakeProvider provider = new ProviderCmIdTest.FakeProvider();
        FakeIwarpProvider.cm = provider;
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.resolveAddr(null, SIW_ADDR, 2000);
            assertNotNull(id.provider);
            assertEquals(List.of("resolveAddr 7400 2000"), provider.made.get(0).calls);
        }
    }

    @Test
    void aDestinationMatchedOnlyByPrefixGoesToTheIwarpDevicesCmButAnExactGidStays() throws Exception {
        Gid soft0;
        try (Context c = Verbs.open("soft0")) {
            soft0 = c.queryGid(1, 1); // its ULA, fd72:646d:6134:6a00::n
        }
        byte[] near = soft0.bytes();
        near[15] ^= 0x40; // same /64, not soft0's address: a prefix guess
        ProviderCmIdTest.FakeProvider provider = new ProviderCmIdTest.FakeProvider();
        FakeIwarpProvider.cm = provider;
        CmEngine.INSTANCE.devices.devicesForResolve(true); // the engine's device list is kept for a second
        try (CmEventChannel ch = new CmEventChannel(); CmId guess = ch.createId(PortSpace.TCP);
             CmId exact = ch.createId(PortSpace.TCP)) {
            guess.resolveAddr(null, new InetSocketAddress(InetAddress.getByAddress(near), 7401), 2000);
            assertNotNull(guess.provider, "a prefix guess goes to librdmacm when an iWARP device exists");
            exact.resolveAddr(null, new InetSocketAddress(InetAddress.getByAddress(soft0.bytes()), 7402), 2000);
            assertNull(exact.provider, "soft0's own address stays with the engine");
            assertEquals(1, provider.made.size());
        }
    }

    @Test
    void aBindTheIwarpCmRefusesIsTheEnginesAgain() {
        ProviderCmIdTest.FakeProvider refusing = new ProviderCmIdTest.FakeProvider() {
            @Override
            public Id createId(int portSpace, Listener listener) {
                ProviderCmIdTest.FakeId f = new ProviderCmIdTest.FakeId(listener, null) {
                    @Override
                    public void bindAddr(InetSocketAddress addr) {
                        throw new VerbsException(Errno.ENODEV, "rdma_bind_addr: no device has " + addr);
                    }
                };
                made.add(f);
                return f;
            }
        };
        FakeIwarpProvider.cm = refusing;
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            try {
                id.bindAddr(SIW_ADDR);
            } catch (VerbsException e) {
                // the engine's answer for an address on no device, whatever it is, not librdmacm's ENODEV
                assertTrue(!e.getMessage().contains("rdma_bind_addr"), e.getMessage());
            }
            assertNull(id.provider, "the id is the engine's again");
            assertEquals(1, refusing.made.size());
            assertTrue(refusing.made.get(0).closed, "the provider's id was destroyed");
        }
    }

    @Test
    void withoutAnIwarpDeviceNothingGoesToAProvider() {
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            try {
                id.bindAddr(SIW_ADDR);
            } catch (VerbsException e) {
                // the engine's answer
            }
            assertNull(id.provider);
        }
    }
}

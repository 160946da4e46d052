// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.reflect.Proxy;
import java.util.List;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.spi.CmProvider;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * A stand-in provider with one iWARP device (transport "iWARP (1)") whose contexts offer a connection
 * manager of their own ({@link CmProvider.CmAccess}) and answer no queries, as far as the cm can tell
 * like siw: no GID places an address on it. It lists its device only while a test has set
 * {@link #cm}; found by ServiceLoader (META-INF/services in the test resources), so every other test
 * sees no device from it.
 */
public final class FakeIwarpProvider implements VerbsProvider {
    /** The device's connection manager while a test uses it; null: the provider lists no device. */
    static volatile CmProvider cm;

    static final Device DEVICE = new Device() {
        @Override
        public String name() {
            return "fakeiw0";
        }

        @Override
        public long guid() {
            return 0x77;
        }

        @Override
        public String provider() {
            return "fakeiwarp";
        }

        @Override
        public String transportName() {
            return "iWARP (1)";
        }

        @Override
        public Context open() {
            return (Context) Proxy.newProxyInstance(FakeIwarpProvider.class.getClassLoader(),
                    new Class<?>[] {Context.class, CmProvider.CmAccess.class}, (proxy, m, args) -> switch (m.getName()) {
                        case "cmProvider" -> cm;
                        case "device" -> DEVICE;
                        case "close" -> null;
                        case "toString" -> "context of fakeiw0";
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> throw new UnsupportedOperationException(m.getName() + " on the stand-in iWARP device");
                    });
        }
    };

    @Override
    public String name() {
        return "fakeiwarp";
    }

    @Override
    public List<Device> devices() {
        return cm == null ? List.of() : List.of(DEVICE);
    }
}

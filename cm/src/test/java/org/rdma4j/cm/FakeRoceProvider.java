// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.reflect.Proxy;
import java.util.List;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * A stand-in provider with one RoCE device ("fakerxe0", provider "fakenative") whose GID 1 is
 * {@link #gid}: a kernel device seen from a network namespace where its address is not local (rxe0's
 * fd77::1 from the namespace of its peer). It answers the queries address resolution makes (device,
 * port and GID) and nothing else. It lists its device only while a test has set {@link #gid}; found by
 * ServiceLoader (META-INF/services in the test resources), so every other test sees no device from it.
 */
public final class FakeRoceProvider implements VerbsProvider {
    /** The device's address while a test uses it; null: the provider lists no device. */
    static volatile Gid gid;

    static final Device DEVICE = new Device() {
        @Override
        public String name() {
            return "fakerxe0";
        }

        @Override
        public long guid() {
            return 0x78;
        }

        @Override
        public String provider() {
            return "fakenative";
        }

        @Override
        public Context open() {
            DeviceAttr dev;
            PortAttr port;
            try (Context soft0 = Verbs.open("soft0")) { // attributes of a device with one active port
                dev = soft0.queryDevice();
                port = soft0.queryPort(1);
            }
            return (Context) Proxy.newProxyInstance(FakeRoceProvider.class.getClassLoader(),
                    new Class<?>[] {Context.class}, (proxy, m, args) -> switch (m.getName()) {
                        case "queryDevice" -> dev;
                        case "queryPort" -> port;
                        case "queryGid" -> (int) args[1] == 1 ? gid : Gid.ZERO;
                        case "device" -> DEVICE;
                        case "close" -> null;
                        case "toString" -> "context of fakerxe0";
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> throw new UnsupportedOperationException(m.getName() + " on the stand-in RoCE device");
                    });
        }
    };

    @Override
    public String name() {
        return "fakenative";
    }

    @Override
    public List<Device> devices() {
        return gid == null ? List.of() : List.of(DEVICE);
    }
}

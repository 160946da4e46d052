// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.rdma4j.verbs.spi.VerbsProvider;

/** Providers for the discovery tests, also registered with ServiceLoader on the test class path. */
final class TestProviders {
    private TestProviders() {}

    /** A device that cannot be opened: discovery never opens one. */
    record FakeDevice(String name, String provider) implements Device {
        @Override
        public long guid() {
            return 0x1234;
        }

        @Override
        public Context open() {
            throw new VerbsException(Errno.EOPNOTSUPP, "a test device");
        }
    }

    /** Always available; lists "fake0" and whatever {@link #createDevice} made. */
    public static final class Available implements VerbsProvider {
        static final List<Device> CREATED = new CopyOnWriteArrayList<>();

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public List<Device> devices() {
            List<Device> l = new ArrayList<>();
            l.add(new FakeDevice("fake0", "fake"));
            l.addAll(CREATED);
            return l;
        }

        @Override
        public Device createDevice(DeviceSpec spec) {
            if (!spec.kind().equals("loop")) {
                throw new VerbsException(Errno.EINVAL, "fake knows only kind 'loop', not '" + spec.kind() + "'");
            }
            Device d = new FakeDevice(spec.option("name", "fake" + (CREATED.size() + 1)), "fake");
            CREATED.add(d);
            return d;
        }

        @Override
        public void removeDevice(Device device) {
            if (!CREATED.remove(device)) {
                throw new VerbsException(Errno.EINVAL, device.name() + " was not created here");
            }
        }
    }

    /** Never available: its "native library" is missing. */
    public static final class Unavailable implements VerbsProvider {
        static final UnsatisfiedLinkError CAUSE = new UnsatisfiedLinkError("libfakeverbs.so.1: cannot open shared "
                + "object file: No such file or directory");

        @Override
        public String name() {
            return "broken";
        }

        @Override
        public Throwable unavailabilityCause() {
            return CAUSE;
        }

        @Override
        public List<Device> devices() {
            throw new AssertionError("devices() of an unavailable provider must not be called");
        }
    }
}

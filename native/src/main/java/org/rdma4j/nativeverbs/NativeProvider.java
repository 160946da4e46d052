package org.rdma4j.nativeverbs;

import java.util.List;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.spi.VerbsProvider;

/** The "native" provider: the host's libibverbs devices. Thread safe. */
public final class NativeProvider implements VerbsProvider {
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

    static Throwable cause() {
        return new UnsupportedOperationException("native provider: not implemented yet");
    }

    @Override
    public List<Device> devices() {
        return List.of();
    }
}

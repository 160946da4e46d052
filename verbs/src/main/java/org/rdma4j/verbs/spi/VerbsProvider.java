package org.rdma4j.verbs.spi;

import java.util.List;
import org.rdma4j.verbs.Device;

/**
 * A source of RDMA devices, found with {@link java.util.ServiceLoader}. Like Netty's
 * {@code Epoll.isAvailable()/unavailabilityCause()}: a provider that cannot work here says why.
 */
public interface VerbsProvider {
    /** Short name, e.g. "soft" or "native". */
    String name();

    boolean isAvailable();

    /** Why {@link #isAvailable()} is false; null when available. */
    Throwable unavailabilityCause();

    /** The provider's devices (empty when unavailable). */
    List<Device> devices();
}

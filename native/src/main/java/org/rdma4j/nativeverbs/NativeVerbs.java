// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Whether the native provider works in this process, the way of Netty's {@code Epoll}: never throws
 * while finding out, and says what to do when it does not ({@link #unavailabilityCause()}). Thread safe.
 */
public final class NativeVerbs {
    private NativeVerbs() {}

    /** True when libibverbs loaded, native access is enabled, and it lists at least one device. */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /** Why the native provider cannot work here, with what to do about it; null when it can. */
    public static Throwable unavailabilityCause() {
        return NativeProvider.cause();
    }

    /** Returns if available, else throws ENODEV with {@link #unavailabilityCause()} attached. */
    public static void ensureAvailability() {
        Throwable cause = unavailabilityCause();
        if (cause != null) {
            throw new VerbsException(Errno.ENODEV, "provider 'native' is unavailable: " + cause.getMessage(), cause);
        }
    }
}

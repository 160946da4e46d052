// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The native provider's {@code System.Logger} category, {@value #CATEGORY}: a device opened (DEBUG,
 * with its transport) and librdmacm's event thread failing (WARNING, in {@link NativeCm}). Thread safe.
 */
final class NativeLog {
    /** The native provider's logger category. */
    static final String CATEGORY = "org.rdma4j.nativeverbs";
    static final Logger LOG = System.getLogger(CATEGORY);

    private NativeLog() {
    }

    static void opened(NativeDevice device) {
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "opened " + device + ", transport " + device.transportName());
        }
    }
}

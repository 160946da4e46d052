// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * What {@code ibv_query_pkey} refuses on every provider, with the same errno and message: a port the
 * device does not have and an index outside the port's P_Key table are EINVAL (libibverbs itself
 * reads the table from sysfs and would say ENOENT). Stateless; thread safe.
 */
public final class PortRules {
    private PortRules() {}

    /**
     * Checks {@code port} and {@code index} against a device with ports 1..{@code portCount} whose
     * port has a P_Key table of {@code tableLength} entries.
     *
     * @param port        the port asked for
     * @param portCount   the device's number of ports
     * @param index       the P_Key index asked for
     * @param tableLength the port's P_Key table length
     * @throws VerbsException EINVAL for a port that does not exist or an index outside the table
     */
    public static void checkPkeyIndex(int port, int portCount, int index, int tableLength) {
        if (port < 1 || port > portCount) {
            throw new VerbsException(Errno.EINVAL, "port " + port + " does not exist");
        }
        if (index < 0 || index >= tableLength) {
            throw new VerbsException(Errno.EINVAL, "P_Key index " + index + " is outside the table (" + tableLength
                    + " entries)");
        }
    }
}

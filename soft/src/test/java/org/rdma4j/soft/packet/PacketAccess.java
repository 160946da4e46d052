// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.packet;


/** Tests of the links' subpackages: the package-private parts of {@link Packet} they look at. */
public final class PacketAccess {
    private PacketAccess() {
    }

    /** {@link Packet#markFree}: sets whether {@code p} is in its pool, returns whether it was. */
    public static boolean markFree(Packet p, boolean free) {
        return p.markFree(free);
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.verbs.Gid;

/**
 * A link to devices in this JVM that loses nothing: every packet reaches the receiving device's sink,
 * in order, on the sending thread. A sender may resolve a destination once ({@link #resolve}) and
 * hand packets straight to the {@link Route}'s sink while the route stays {@link Route#valid() valid},
 * and may hand over bursts ({@link Packet#burstPackets} &gt; 1). A link that can lose, reorder or
 * corrupt packets (UDP, {@link FaultyLink}) is not one. Thread safe.
 */
public interface DirectLink extends Link {
    /** Where unicast packets to {@code dst} go, or null when no device owns it (or it is multicast). */
    Route resolve(Gid dst);
}

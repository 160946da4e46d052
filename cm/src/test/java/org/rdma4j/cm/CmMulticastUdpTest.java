// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import org.junit.jupiter.api.BeforeAll;
import org.rdma4j.soft.SoftDevices;

/** {@link CmMulticastCases} on two soft devices over UDP on IPv4 loopback addresses: IPv4 groups, joined with IP_ADD_MEMBERSHIP. */
class CmMulticastUdpTest extends CmMulticastCases {
    @BeforeAll
    static void devices() {
        InetAddress a;
        InetAddress b;
        try {
            a = InetAddress.getByName("127.0.0.71");
            b = InetAddress.getByName("127.0.0.72");
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
        int udp = SoftDevices.freeUdpPort(27_000, a, b);
        setUpDevices("soft:udp?name=cmmuA&addr=127.0.0.71&port=" + udp,
                "soft:udp?name=cmmuB&addr=127.0.0.72&port=" + udp);
    }
}

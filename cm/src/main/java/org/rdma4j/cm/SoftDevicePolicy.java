// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

/**
 * When {@link RdmaServer#listen(java.net.InetSocketAddress, EndpointOptions)} and
 * {@link RdmaClient#connect(java.net.InetSocketAddress, EndpointOptions)} make a soft RoCEv2 device
 * (the {@code soft:udp} device of {@code rdma4j-soft}, RoCEv2 over UDP port 4791 from the address) for
 * a local address that no RDMA device has, instead of failing with EADDRNOTAVAIL (listen) or ENODEV
 * (connect), as {@code rdma_bind_addr} and {@code rdma_resolve_addr} do when no device has the address.
 *
 * <p>The address is the server's listen address, or the client's source address: the one given with
 * {@link EndpointOptions#source}, else the one the host's route to the server leaves from (as the kernel
 * chooses it for {@code rdma_resolve_addr}). A wildcard listen address makes no device. The device lives
 * until the JVM exits (as an rxe link stays until {@code rdma link delete}) and later endpoints on the
 * address use it; it needs {@code org.rdma4j:rdma4j-soft} on the class or module path (without it the
 * error says so). The {@link CmId} and {@link Endpoint} levels (librdmacm's own calls) never make a
 * device, as librdmacm does not: there an address without a device is EADDRNOTAVAIL or ADDR_ERROR.
 *
 * <p>Why loopback only by default: a program that names 127.0.0.1 means "this host", and on a laptop
 * without an RDMA NIC or rxe it should just run; a program that names a network address means a NIC, and
 * quietly replacing a missing or misnamed NIC with a software device that answers RoCEv2 packets from
 * the network would hide the mistake and expose a service nobody asked for. The nearest Linux analogue
 * is an rxe device, which an operator adds once ({@code rdma link add rxe0 type rxe netdev eth0}); here
 * the front door adds a loopback one on demand.
 */
public enum SoftDevicePolicy {
    /** Never: an address without a device fails, as with librdmacm. */
    NEVER,
    /**
     * Only for a loopback address (127.0.0.0/8, ::1), the default: a program connecting on one host (a
     * server thread and a client in one JVM on 127.0.0.1, or a server JVM and a client JVM, the client's
     * device then on the next free loopback address) runs with no device set up, and nothing is ever
     * exposed on a network interface, nor does a missing or misconfigured NIC turn silently into a
     * software device.
     */
    LOOPBACK,
    /**
     * For any local address: a soft device that speaks RoCEv2 on that interface's network, reachable by
     * other hosts (rxe or rdma4j peers). Choose it knowingly: it answers RoCEv2 packets from the network,
     * and on a host with an RDMA NIC on another address it hides the mistake of naming the wrong one.
     */
    ANY_ADDRESS;

    /** {@return whether this policy makes a device on {@code address}} @param address a local address */
    boolean allows(java.net.InetAddress address) {
        return this == ANY_ADDRESS || this == LOOPBACK && address.isLoopbackAddress();
    }
}

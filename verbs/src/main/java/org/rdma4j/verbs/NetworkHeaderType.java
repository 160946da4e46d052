// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * The network header in front of a UD receive ({@code enum rdma_network_type}): IB (an IB GRH, also
 * RoCE v1), or on RoCEv2 the packet's IPv4 or IPv6 header.
 */
public enum NetworkHeaderType {
    /** A 40-byte IB GRH (IB, RoCE v1). */
    IB,
    /** RoCEv2 over IPv4: the 20-byte IPv4 header sits in the last 20 bytes of the 40-byte area. */
    IPV4,
    /** RoCEv2 over IPv6: the 40-byte IPv6 header. */
    IPV6
}

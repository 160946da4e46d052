// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * rdma_cm's service ids for the IP port spaces: {@code 0x0000_0000_PPPP_pppp} with the port space
 * {@code PPPP} and the port {@code pppp} (the kernel's RDMA_IB_IP_PS_* constants). Stateless.
 */
public final class ServiceId {
    /** The port space of RC connections over IP (RDMA_PS_TCP). */
    public static final int PS_TCP = 0x0106;
    /** The port space of UD ids over IP (RDMA_PS_UDP). */
    public static final int PS_UDP = 0x0111;
    /** The port space of IPoIB-style ids (RDMA_PS_IPOIB). */
    public static final int PS_IPOIB = 0x0002;
    /** The port space of RC or UD ids with native IB addresses (RDMA_PS_IB). */
    public static final int PS_IB = 0x013F;
    /** The bits that hold the port space of an IP service id. */
    public static final long IP_PS_MASK = 0xFFFF_FFFF_FFFF_0000L;

    private ServiceId() {
    }

    /**
     * {@return the service id of {@code port} in {@code portSpace}}
     *
     * @param portSpace the port space
     * @param port the port
     */
    public static long of(int portSpace, int port) {
        return (long) (portSpace & 0xFFFF) << 16 | port & 0xFFFF;
    }

    /**
     * {@return the port space of an IP service id, or -1 if it is not one}
     *
     * @param serviceId the service id
     */
    public static int portSpace(long serviceId) {
        long ps = (serviceId & IP_PS_MASK) >>> 16;
        return ps == PS_TCP || ps == PS_UDP || ps == PS_IPOIB || ps == PS_IB ? (int) ps : -1;
    }

    /**
     * {@return the port of a service id (its low 16 bits)}
     *
     * @param serviceId the service id
     */
    public static int port(long serviceId) {
        return (int) (serviceId & 0xFFFF);
    }

    /**
     * {@return whether rdma_cm puts its {@link CmaHeader} in this service id's REQ}
     *
     * @param serviceId the id
     */
    public static boolean carriesCmaHeader(long serviceId) {
        int ps = portSpace(serviceId);
        return ps == PS_TCP || ps == PS_UDP || ps == PS_IPOIB;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

/**
 * What a {@link ConformanceSetup} can do beyond the verbs every provider has. A suite or test that
 * needs one says so with {@link Requires}; on a setup without it the test is skipped with the reason,
 * so the report shows what did not run where, and why.
 */
public enum Capability {
    /**
     * The link delivers every packet exactly once and in order. Tests that watch for "nothing arrives",
     * count retries or RNR NAKs exactly, or time a retry budget need it; a lossy link legitimately
     * breaks them.
     */
    RELIABLE_LINK,
    /** The link loses, duplicates and reorders packets on purpose; {@link ConformanceSetup#faults()} counts them. */
    LOSSY_LINK,
    /**
     * The receiver sees the hop limit and traffic class each packet was sent with (in a UD GRH area and
     * an AH made from it). Native UDP sockets read them per datagram; java.nio's DatagramChannel cannot,
     * so its receiver shows the defaults (64, 0).
     */
    HOP_LIMIT_AND_CLASS,
    /**
     * A QP can be connected to another QP of its own device, or to itself (QP-to-QP loopback: rxe hands
     * a packet for its own address straight back). Two UDP devices sharing one IP address and told apart
     * only by port cannot: a packet to the device's own address goes to the port of its peer.
     */
    SELF_LOOPBACK,
    /** UD multicast: the devices can join groups of the connection GID's family on this link. */
    MULTICAST,
    /**
     * Port 1 can be taken down and brought up ({@link ConformanceSetup#setPortUp}) on a device no other
     * suite uses ({@link ConformanceSetup#openIsolated}).
     */
    PORT_STATE_CONTROL,
    /**
     * A device whose every object limit is small enough to reach in a test
     * ({@link ConformanceSetup#openSmallLimits}).
     */
    SMALL_LIMITS,
    /**
     * A blocked wait ({@code getEvent}, {@code getAsyncEvent}, {@code EventPoller.poll}) sits in
     * {@code poll(2)} in native code, where Java reports the thread RUNNABLE, not WAITING: the suite
     * takes a waiter that stays inside the call for {@link Waiters#NATIVE_SETTLE_MS} as waiting.
     */
    WAITS_IN_NATIVE_CODE,
    /** The provider can count its hidden objects (keys, QP numbers) for leak checks ({@link ConformanceSetup#hiddenObjects}). */
    HIDDEN_OBJECT_COUNT
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.agent;

/**
 * A unit of the device's own work, in the way of Agrona's agents: {@link #doWork()} does what is due
 * now and says how much it did. An {@link AgentRunner} calls it on a thread of its own and idles with an
 * {@link IdleStrategy} when it did nothing; a test calls it directly, with a {@link NanoClock} it moves
 * by hand, instead of sleeping. Implementations say whether doWork may run on more than one thread.
 */
public interface Agent {
    /** Does the work that is due; returns how much was done (0: nothing, the runner may idle). */
    int doWork();

    /** The agent's role, used to name its thread. */
    String roleName();

    /** Called once on the runner's thread after the last doWork (release what the agent holds). */
    default void onClose() {
    }
}

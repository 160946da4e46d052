// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.agent;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Runs one {@link Agent} on a daemon platform thread named {@code rdma4j-<role>}: doWork, idle,
 * again, until {@link #close()}. A failing round is handed to the error handler and the agent goes on
 * (nothing may stop a device's thread). Thread safe.
 */
public final class AgentRunner implements AutoCloseable {
    private final Agent agent;
    private final IdleStrategy idle;
    private final Consumer<Throwable> errors;
    private final Thread thread;
    private volatile boolean running = true;

    private AgentRunner(Agent agent, IdleStrategy idle, Consumer<Throwable> errors) {
        this.agent = agent;
        this.idle = idle;
        this.errors = errors;
        this.thread = Thread.ofPlatform().daemon().name("rdma4j-" + agent.roleName()).unstarted(this::run);
    }

    /** Starts a thread that runs {@code agent} until {@link #close()}. */
    public static AgentRunner start(Agent agent, IdleStrategy idle, Consumer<Throwable> errors) {
        AgentRunner r = new AgentRunner(agent, idle, errors);
        r.thread.start();
        return r;
    }

    private void run() {
        try {
            while (running) {
                int work;
                try {
                    work = agent.doWork();
                } catch (Throwable t) {
                    errors.accept(t);
                    work = 0;
                }
                if (running) {
                    idle.idle(work);
                }
            }
        } finally {
            agent.onClose();
        }
    }

    /** Ends a park of the idle strategy now (there is new work). */
    public void wake() {
        LockSupport.unpark(thread);
    }

    /** Whether the caller is this runner's thread. */
    public boolean isRunnerThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Stops the loop after the current round and waits up to {@code timeoutMs} for the thread to end
     * (an agent blocked in a call ends when that call returns).
     */
    public void close(long timeoutMs) {
        running = false;
        wake();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(timeoutMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the loop without waiting for the thread. */
    @Override
    public void close() {
        running = false;
        wake();
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.agent;

/**
 * Where the engine and the links read the time (nanoseconds, only differences mean anything), so
 * timer tests move a fake clock instead of waiting. {@link #SYSTEM} is {@link System#nanoTime()}.
 */
@FunctionalInterface
public interface NanoClock {
    NanoClock SYSTEM = System::nanoTime;

    long nanoTime();
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.device;

import java.util.TreeMap;
import org.rdma4j.verbs.Context;

/**
 * The one line the tools print of a port's counters (pingpong after a failed completion, perf with
 * {@code --counters}): {@code counters:} and each non-zero counter as {@code name=value}, by name.
 */
public final class PortCounters {
    private PortCounters() {
    }

    /** {@return the line for port {@code port} of {@code ctx}, or why the counters are unavailable} */
    public static String line(Context ctx, int port) {
        StringBuilder sb = new StringBuilder("counters:");
        try {
            new TreeMap<>(ctx.counters(port)).forEach((name, value) -> {
                if (value != 0) {
                    sb.append(' ').append(name).append('=').append(value);
                }
            });
        } catch (RuntimeException e) {
            return "counters: unavailable (" + e.getMessage() + ")";
        }
        return sb.toString();
    }
}

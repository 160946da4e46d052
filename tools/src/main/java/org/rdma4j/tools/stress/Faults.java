// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The faults a stress run injects into a device's outgoing packets, each a probability 0..1. They reach
 * the soft device as device-spec options ({@link #specOptions}), so the tools need no compile
 * dependency on the provider; the device reports what it injected as its {@code fault_*} counters.
 */
public record Faults(double loss, double duplicate, double reorder, double corrupt) {
    public Faults {
        for (double d : new double[] {loss, duplicate, reorder, corrupt}) {
            if (!(d >= 0 && d <= 1)) {
                throw new IllegalArgumentException("fault probability " + d + " is outside 0..1");
            }
        }
    }

    /** The spec options ({@code loss, dup, reorder, corrupt, seed}) of a device injecting these faults. */
    public Map<String, String> specOptions(long seed) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("loss", Double.toString(loss));
        m.put("dup", Double.toString(duplicate));
        m.put("reorder", Double.toString(reorder));
        m.put("corrupt", Double.toString(corrupt));
        m.put("seed", Long.toString(seed));
        return m;
    }

    /** Faults injected, from a device's counters: lost, duplicated, reordered, corrupted (0 where absent). */
    public static long[] injected(Map<String, Long> counters) {
        return new long[] {counters.getOrDefault("fault_lost", 0L), counters.getOrDefault("fault_duplicated", 0L),
            counters.getOrDefault("fault_reordered", 0L), counters.getOrDefault("fault_corrupted", 0L)};
    }
}

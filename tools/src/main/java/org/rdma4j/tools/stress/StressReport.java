// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What every stress run's report shares: its exit code on failure and which counters it prints. */
public final class StressReport {
    /** Exit code of a run that found an error. */
    public static final int EXIT_FAILED = 1;

    /** Counters of the receiving device worth a line each, in this order; other non-zero ones follow. */
    private static final List<String> KEY_COUNTERS = List.of("rcvd_pkts", "sent_pkts", "duplicate_request",
            "out_of_seq_request", "sent_seq_err_naks", "send_rnr_err", "icrc_err_drops", "malformed_drops");

    private StressReport() {}

    /**
     * The key counters (when the device has them), then any other counter that is not zero; the
     * {@code fault_*} counters are left out (the report prints the injected faults on a line of their own).
     */
    public static Map<String, Long> keyCounters(Map<String, Long> all) {
        Map<String, Long> shown = new LinkedHashMap<>();
        for (String k : KEY_COUNTERS) {
            Long v = all.get(k);
            if (v != null) {
                shown.put(k, v);
            }
        }
        for (Map.Entry<String, Long> e : all.entrySet()) {
            if (!shown.containsKey(e.getKey()) && e.getValue() != 0 && !e.getKey().startsWith("fault_")) {
                shown.put(e.getKey(), e.getValue());
            }
        }
        return shown;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * --json (and perftest's --out_json/--out_json_file): the run as JSON with the field names perftest's
 * --out_json writes ({@code test_info} with "test", "Dual_port", "Device", ...; {@code results} with
 * "MsgSize", "n_iterations", "BW_peak", "BW_average", "MsgRate" or "t_min" ... "percentile_99.9").
 * perftest's file is not valid JSON (unquoted keys, trailing commas) and keeps only the last size of
 * an -a run; this one is valid JSON, {@code results} is the last size as perftest has it, and
 * {@code all_results} holds every size. Latency runs add "samples" (how many the statistics describe,
 * and "samples_rule": which) and "percentiles" (p50 .. p99.99 and max, microseconds): all of them, like
 * perftest's fields, from {@link LatencyStats}, so they are the table's numbers (p99 there is p99 here,
 * max is t_max). Stateless.
 */
final class JsonReport {
    private JsonReport() {}

    static void write(Path file, PerfParams p, PerfRun run) throws IOException {
        Files.writeString(file, render(p, run));
    }

    static String render(PerfParams p, PerfRun run) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("test_info", testInfo(p, run));
        List<Map<String, Object>> all = new ArrayList<>();
        for (BwReport r : run.bwResults) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("MsgSize", r.size());
            m.put("n_iterations", r.iters());
            m.put("BW_peak", round(r.bwPeak(), 2));
            m.put("BW_average", round(r.bwAvg(), 2));
            m.put("MsgRate", round(r.msgRateAvg(), 6));
            all.add(m);
        }
        for (LatencyStats s : run.latResults) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("MsgSize", s.size);
            m.put("n_iterations", s.iters);
            m.put("t_min", round(s.tMin, 2));
            m.put("t_max", round(s.tMax, 2));
            m.put("t_typical", round(s.tTypical, 2));
            m.put("t_avg", round(s.tAvg, 2));
            m.put("t_stdev", round(s.tStdev, 2));
            m.put("percentile_99", round(s.p99, 2));
            m.put("percentile_99.9", round(s.p999, 2));
            m.put("samples", s.samples());
            m.put("samples_rule", LatencyStats.SAMPLE_RULE);
            m.put("percentiles", percentiles(s));
            all.add(m);
        }
        for (double[] d : run.latDurationResults) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("MsgSize", (long) d[0]);
            m.put("n_iterations", (long) d[1]);
            m.put("t_avg", round(d[2], 2));
            m.put("tps_average", round(d[3], 2));
            all.add(m);
        }
        root.put("results", all.isEmpty() ? Map.of() : all.get(all.size() - 1));
        root.put("all_results", all);
        StringBuilder sb = new StringBuilder();
        emit(sb, root, "");
        return sb.append('\n').toString();
    }

    private static Map<String, Object> testInfo(PerfParams p, PerfRun run) {
        Map<String, Object> m = new LinkedHashMap<>();
        StringBuilder test = new StringBuilder(p.verb().title()).append('_');
        if (p.verb() == Verb.ATOMIC) {
            test.append(p.atomicType.name()).append('_');
        }
        if (p.isBw()) {
            test.append(p.duplex ? "Bidirectional_" : "").append(p.postList > 1 ? "Post_List_" : "").append("BW_");
        } else {
            test.append("Latency_");
        }
        m.put("test", test.append("Test").toString());
        m.put("Dual_port", "OFF");
        m.put("Device", run.deviceName);
        m.put("Number_of_qps", p.numQps);
        m.put("Transport_type", "IB");
        m.put("Connection_type", p.connection.name());
        m.put("Using_SRQ", p.useSrq ? "ON" : "OFF");
        m.put("PCIe_relax_order", "Unsupported");
        m.put("ibv_wr_API", "OFF");
        if (p.isClient() || p.duplex) {
            m.put("TX_depth", p.txDepth);
        }
        if (p.postList > 1) {
            m.put("Post_List", p.postList);
        }
        if (p.verb() == Verb.SEND && (p.server || p.duplex)) {
            m.put("RX_depth", p.rxDepth);
        }
        if (p.isBw()) {
            m.put("CQ_Moderation", p.cqMod);
        }
        m.put("Mtu", PerfParams.mtuBytes(p.currMtu));
        m.put("Link_type", run.linkLayerName);
        if (p.gidIndex != -1) {
            m.put("GID_index", p.gidIndex);
        }
        if (p.verb() != Verb.READ && p.verb() != Verb.ATOMIC) {
            m.put("Max_inline_data", p.inlineSize);
        } else {
            m.put("Outstand_reads", p.outReads);
        }
        m.put("rdma_cm_QPs", p.rdmaCm ? "ON" : "OFF");
        m.put("Data_ex_method", p.rdmaCm ? "rdma_cm" : "Ethernet");
        return m;
    }

    /** p50 .. p99.99 and max by perftest's percentile rule ({@link LatencyStats#percentile}). */
    static Map<String, Object> percentiles(LatencyStats s) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (double q : new double[] {50, 90, 99, 99.9, 99.99}) {
            m.put("p" + (q == Math.rint(q) ? String.valueOf((int) q) : String.valueOf(q)),
                    round(s.percentile(q / 100), 2));
        }
        m.put("max", round(s.percentile(1), 2));
        return m;
    }

    private static double round(double v, int digits) {
        if (!Double.isFinite(v)) {
            return v;
        }
        return Double.parseDouble(Tables.fixed(v, digits)); // rounded as the table rounds (C's printf)
    }

    @SuppressWarnings("unchecked")
    private static void emit(StringBuilder sb, Object v, String indent) {
        if (v instanceof Map<?, ?> map) {
            if (map.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append("{\n");
            int i = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                sb.append(indent).append("  ").append(quote(String.valueOf(e.getKey()))).append(": ");
                emit(sb, e.getValue(), indent + "  ");
                sb.append(++i < map.size() ? ",\n" : "\n");
            }
            sb.append(indent).append('}');
        } else if (v instanceof List<?> list) {
            if (list.isEmpty()) {
                sb.append("[]");
                return;
            }
            sb.append("[\n");
            for (int i = 0; i < list.size(); i++) {
                sb.append(indent).append("  ");
                emit(sb, list.get(i), indent + "  ");
                sb.append(i + 1 < list.size() ? ",\n" : "\n");
            }
            sb.append(indent).append(']');
        } else if (v instanceof String s) {
            sb.append(quote(s));
        } else if (v instanceof Double d) {
            sb.append(Double.isFinite(d) ? String.valueOf(d) : "null");
        } else {
            sb.append(v);
        }
    }

    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}

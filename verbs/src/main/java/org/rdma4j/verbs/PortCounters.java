// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A port's counters with a name and a type for each ({@link Context#portCounters(int)}), in three groups:
 * {@link Traffic}, {@link Retries} and {@link Drops}; {@link #all()} keeps every counter the device has
 * by its own name ({@link Context#counters(int)}). A counter the device does not keep is
 * {@link #ABSENT} (-1), never 0. Names follow rxe's {@code hw_counters} (the soft device uses them);
 * on a NIC the port's {@code counters} files and the well-known names of other drivers stand in where
 * they mean the same thing (each getter says which). A snapshot: immutable, thread safe.
 *
 * @param traffic packets and messages
 * @param retries transport retries, NAKs and their exhaustion
 * @param drops packets dropped on receipt
 * @param all every counter by name, as {@link Context#counters(int)} returned it (unmodifiable)
 */
public record PortCounters(Traffic traffic, Retries retries, Drops drops, Map<String, Long> all) {
    /** The value of a counter the device does not keep. */
    public static final long ABSENT = -1;

    /**
     * Packets and messages.
     *
     * @param sentPackets packets sent ({@code sent_pkts}; a NIC's {@code port_xmit_packets})
     * @param receivedPackets packets received ({@code rcvd_pkts}; {@code port_rcv_packets})
     * @param sends SEND work requests completed ({@code rdma_sends})
     * @param receives SEND messages received ({@code rdma_recvs})
     * @param linkDowned times the port went down ({@code link_downed})
     */
    public record Traffic(long sentPackets, long receivedPackets, long sends, long receives, long linkDowned) {
    }

    /**
     * Transport retries, NAKs and their exhaustion.
     *
     * @param retransmits times a requester went back to resend ({@code retransmits}, soft only)
     * @param completerRetries retries after an ACK timeout or a sequence NAK ({@code completer_retry_err})
     * @param retryExceeded work requests that ended RETRY_EXC_ERR ({@code retry_exceeded_err})
     * @param rnrRetryExceeded work requests that ended RNR_RETRY_EXC_ERR ({@code retry_rnr_exceeded_err};
     *     mlx5's {@code rnr_nak_retry_err})
     * @param receivedRnrNaks RNR NAKs received ({@code rcvd_rnr_err})
     * @param sentRnrNaks RNR NAKs sent ({@code send_rnr_err})
     * @param receivedSequenceNaks sequence-error NAKs received ({@code rcvd_seq_err}; mlx5's
     *     {@code packet_seq_err})
     * @param duplicateRequests duplicate requests received ({@code duplicate_request})
     * @param outOfSequenceRequests requests received out of sequence ({@code out_of_seq_request}; mlx5's
     *     {@code out_of_sequence})
     */
    public record Retries(long retransmits, long completerRetries, long retryExceeded, long rnrRetryExceeded,
                          long receivedRnrNaks, long sentRnrNaks, long receivedSequenceNaks, long duplicateRequests,
                          long outOfSequenceRequests) {
    }

    /**
     * Packets dropped on receipt.
     *
     * @param icrc bad ICRC ({@code icrc_err_drops})
     * @param malformed not a well-formed RoCEv2 packet ({@code malformed_drops})
     * @param unknownQpn for a QP the device does not have ({@code unknown_qpn_drops})
     * @param badAddress RC/UC packets not from the connected peer ({@code rcvd_bad_addr_drops})
     * @param noReceive a SEND with no receive posted, beyond RNR ({@code no_recv_drops})
     * @param total the sum of every counter whose name ends in {@code _drops}
     */
    public record Drops(long icrc, long malformed, long unknownQpn, long badAddress, long noReceive, long total) {
    }

    /** Copies {@code all} (unmodifiable). */
    public PortCounters {
        all = Collections.unmodifiableMap(new LinkedHashMap<>(all));
    }

    /**
     * {@return the typed view of a {@link Context#counters(int)} map}
     *
     * @param counters counter names and values
     */
    public static PortCounters of(Map<String, Long> counters) {
        Map<String, Long> m = counters;
        Traffic t = new Traffic(get(m, "sent_pkts", "port_xmit_packets"), get(m, "rcvd_pkts", "port_rcv_packets"),
                get(m, "rdma_sends"), get(m, "rdma_recvs"), get(m, "link_downed", "hw_link_downed"));
        Retries r = new Retries(get(m, "retransmits"), get(m, "completer_retry_err"), get(m, "retry_exceeded_err"),
                get(m, "retry_rnr_exceeded_err", "rnr_nak_retry_err"), get(m, "rcvd_rnr_err"), get(m, "send_rnr_err"),
                get(m, "rcvd_seq_err", "packet_seq_err"), get(m, "duplicate_request"),
                get(m, "out_of_seq_request", "out_of_sequence"));
        long total = ABSENT;
        for (Map.Entry<String, Long> e : m.entrySet()) {
            if (e.getKey().endsWith("_drops") && e.getValue() != null) {
                total = (total == ABSENT ? 0 : total) + e.getValue();
            }
        }
        Drops d = new Drops(get(m, "icrc_err_drops"), get(m, "malformed_drops"), get(m, "unknown_qpn_drops"),
                get(m, "rcvd_bad_addr_drops"), get(m, "no_recv_drops"), total);
        return new PortCounters(t, r, d, m);
    }

    /**
     * One counter by its name in {@link #all()}.
     *
     * @param name the counter's name, e.g. {@code "rcvd_pkts"}
     * @return the counter named {@code name}, or {@link #ABSENT}
     */
    public long get(String name) {
        return get(all, name);
    }

    private static long get(Map<String, Long> m, String... names) {
        for (String n : names) {
            Long v = m.get(n);
            if (v != null) {
                return v;
            }
        }
        return ABSENT;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

/** Per-port counters, in the spirit (and, where one exists, with the name) of rxe's hw_counters. */
public enum Counter {
    SENT_PKTS("sent_pkts"),
    RCVD_PKTS("rcvd_pkts"),
    DUPLICATE_REQUEST("duplicate_request"),
    OUT_OF_SEQ_REQUEST("out_of_seq_request"),
    RCVD_SEQ_ERR("rcvd_seq_err"),
    SENT_SEQ_ERR("sent_seq_err_naks"),
    RCVD_RNR_ERR("rcvd_rnr_err"),
    SEND_RNR_ERR("send_rnr_err"),
    RETRANSMITS("retransmits"),
    COMPLETER_RETRY_ERR("completer_retry_err"),
    /** ACK timeouts put off because the device's own receive path was behind (an ACK may be queued). */
    TIMEOUT_DEFERRED("ack_timeout_deferred"),
    RETRY_EXCEEDED_ERR("retry_exceeded_err"),
    RETRY_RNR_EXCEEDED_ERR("retry_rnr_exceeded_err"),
    /** SEND work requests completed successfully (rxe counts them in the completer), signaled or not. */
    RDMA_SENDS("rdma_sends"),
    /** Receive completions of SEND messages (rxe: rdma_recvs). */
    RDMA_RECVS("rdma_recvs"),
    ICRC_ERR("icrc_err_drops"),
    MALFORMED("malformed_drops"),
    UNKNOWN_QPN("unknown_qpn_drops"),
    /** RC/UC packets not from the connected peer's address, or not to the QP's own (rxe: check_addr). */
    BAD_ADDR("rcvd_bad_addr_drops"),
    BAD_PKEY("bad_pkey_drops"),
    BAD_QKEY("bad_qkey_drops"),
    NO_RECV_DROPS("no_recv_drops"),
    /** UD datagrams longer than the posted receive (GRH included). */
    UD_LENGTH_DROPS("ud_length_drops"),
    /** Multicast packets for a group no QP of this device is attached to. */
    MCAST_NO_MEMBER_DROPS("mcast_no_member_drops"),
    INBOUND_OVERFLOW("inbound_overflow_drops"),
    /** MADs for QP1 whose payload is not exactly one 256-byte MAD. */
    GSI_LENGTH_DROPS("gsi_length_drops"),
    /** MADs for QP1 while no GsiPort of the port is open (no connection manager to take them). */
    GSI_NO_PORT_DROPS("gsi_no_port_drops"),
    /** MADs for QP1 while its queue was full (the receiver was behind). */
    GSI_OVERFLOW_DROPS("gsi_overflow_drops"),
    /** Of the no-port drops, those the installed GsiResponder answered (a REJ for a REQ nobody listens for). */
    GSI_UNCLAIMED_ANSWERS("gsi_unclaimed_answers"),
    STALE_RESPONSES("stale_response_drops"),
    /** Times the port went down (rxe: link_downed). */
    LINK_DOWNED("link_downed"),
    /** Packets whose payload lay in memory freed (arena closed) before it could be copied. */
    FREED_MEMORY("freed_memory_drops"),
    ENGINE_ERRORS("engine_errors");

    public final String label;

    Counter(String label) {
        this.label = label;
    }
}

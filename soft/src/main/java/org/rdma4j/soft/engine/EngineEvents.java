// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import org.rdma4j.soft.wire.Aeth;

/**
 * The engine's one tracing hook: JDK Flight Recorder events for what goes wrong on the wire
 * (retransmissions, NAKs) and for QPs and CQs that fail. Off unless a recording enables them
 * ({@code -XX:StartFlightRecording}, {@code jcmd PID JFR.start}, or a {@code RecordingStream}); then
 * {@code jfr print --categories rdma4j} shows them. Disabled, an emit is two field reads and
 * allocates nothing: nothing is built before {@link Gate#on()} says a recording wants it. Thread safe.
 */
final class EngineEvents {
    private EngineEvents() {
    }

    /** Why a requester went back to resend. */
    static final String CAUSE_TIMEOUT = "ack timeout";
    static final String CAUSE_SEQUENCE_NAK = "sequence NAK";
    static final String CAUSE_RNR_NAK = "RNR NAK";
    /** A response is missing: an ACK past an unanswered READ/atomic, or a gap in READ responses. */
    static final String CAUSE_LOST_RESPONSE = "lost response";

    /** What every event names: the device and the QP. */
    abstract static class QpEvent extends Event {
        @Label("Device")
        String device;
        @Label("QP")
        int qpn;

        final void on(QpEngine qp) {
            device = qp.hca.name;
            qpn = qp.qpn;
        }
    }

    /** A NAK and the PSN it names. */
    abstract static class NakEvent extends QpEvent {
        @Label("PSN")
        int psn;
        @Label("PSN (hex)")
        @Description("The PSN as 0x and six hex digits, as packet traces show it")
        String psnHex;
        @Label("AETH Syndrome")
        int syndrome;
        @Label("NAK")
        @Description("What the syndrome says: PSN sequence error, RNR NAK (timer code N), invalid request, "
                + "remote access error, remote operational error")
        String nak;

        final void nak(int psn, int syndrome) {
            this.psn = psn;
            psnHex = psnHex(psn);
            this.syndrome = syndrome;
            nak = syndromeName(syndrome);
        }
    }

    @Name("org.rdma4j.soft.Retransmit")
    @Label("Retransmit")
    @Category({"rdma4j", "Soft engine"})
    @Description("A requester goes back to a PSN and sends from there again")
    @StackTrace(false)
    static final class Retransmit extends QpEvent {
        @Label("From PSN")
        int psn;
        @Label("From PSN (hex)")
        @Description("The PSN as 0x and six hex digits, as packet traces show it")
        String psnHex;
        @Label("Cause")
        String cause;
    }

    @Name("org.rdma4j.soft.NakReceived")
    @Label("NAK Received")
    @Category({"rdma4j", "Soft engine"})
    @Description("A requester got a NAK (sequence, RNR, invalid request, remote access or operational error)")
    @StackTrace(false)
    static final class NakReceived extends NakEvent {
    }

    @Name("org.rdma4j.soft.NakSent")
    @Label("NAK Sent")
    @Category({"rdma4j", "Soft engine"})
    @Description("A responder answered a request with a NAK")
    @StackTrace(false)
    static final class NakSent extends NakEvent {
    }

    @Name("org.rdma4j.soft.QpError")
    @Label("QP Error")
    @Category({"rdma4j", "Soft engine"})
    @Description("A QP entered the error state (its stack trace says which rule sent it there)")
    static final class QpError extends QpEvent {
        @Label("From State")
        String fromState;
    }

    @Name("org.rdma4j.soft.CqOverflow")
    @Label("CQ Overflow")
    @Category({"rdma4j", "Soft engine"})
    @Description("A completion did not fit its CQ; the QP goes to the error state")
    @StackTrace(false)
    static final class CqOverflow extends QpEvent {
    }

    private static final Gate RETRANSMIT = new Gate(Retransmit.class);
    private static final Gate NAK_RECEIVED = new Gate(NakReceived.class);
    private static final Gate NAK_SENT = new Gate(NakSent.class);
    private static final Gate QP_ERROR = new Gate(QpError.class);
    private static final Gate CQ_OVERFLOW = new Gate(CqOverflow.class);

    static void retransmit(QpEngine qp, int psn, String cause) {
        if (RETRANSMIT.on()) {
            Retransmit e = new Retransmit();
            e.on(qp);
            e.psn = psn;
            e.psnHex = psnHex(psn);
            e.cause = cause;
            e.commit();
        }
    }

    static void nakReceived(QpEngine qp, int psn, int syndrome) {
        if (NAK_RECEIVED.on()) {
            NakReceived e = new NakReceived();
            e.on(qp);
            e.nak(psn, syndrome);
            e.commit();
        }
    }

    static void nakSent(QpEngine qp, int psn, int syndrome) {
        if (NAK_SENT.on()) {
            NakSent e = new NakSent();
            e.on(qp);
            e.nak(psn, syndrome);
            e.commit();
        }
    }

    static void qpError(QpEngine qp, Enum<?> fromState) {
        if (QP_ERROR.on()) {
            QpError e = new QpError();
            e.on(qp);
            e.fromState = fromState.name();
            e.commit();
        }
    }

    static void cqOverflow(QpEngine qp) {
        if (CQ_OVERFLOW.on()) {
            CqOverflow e = new CqOverflow();
            e.on(qp);
            e.commit();
        }
    }

    /** {@return a 24-bit PSN as {@code 0x} and six hex digits} */
    static String psnHex(int psn) {
        String h = Integer.toHexString(psn & 0xFFFFFF);
        return "0x" + "000000".substring(h.length()) + h;
    }

    /** {@return what an AETH syndrome says, in words (IBTA 9.7.5.1: ACK, RNR NAK, NAK codes 0 to 4)} */
    static String syndromeName(int syndrome) {
        int s = syndrome & 0x7F;
        return switch (s & Aeth.TYPE_MASK) {
            case Aeth.TYPE_ACK -> "ACK";
            case Aeth.RNR_NAK -> "RNR NAK (timer code " + (s & Aeth.VALUE_MASK) + ")";
            case Aeth.TYPE_NAK -> switch (s) {
                case Aeth.NAK_PSN_SEQ_ERR -> "PSN sequence error";
                case Aeth.NAK_INVALID_REQUEST -> "invalid request";
                case Aeth.NAK_REMOTE_ACCESS -> "remote access error";
                case Aeth.NAK_REMOTE_OP -> "remote operational error";
                case Aeth.TYPE_NAK | 4 -> "invalid RD request";
                default -> "NAK code " + (s & Aeth.VALUE_MASK) + " (reserved)";
            };
            default -> "reserved syndrome 0x" + Integer.toHexString(s);
        };
    }

    /**
     * Whether an event type is being recorded. Before Flight Recorder starts (the usual case) this is
     * one static read; the event type is looked up only once a recorder exists.
     */
    private static final class Gate {
        private final Class<? extends Event> eventClass;
        private volatile EventType type;

        Gate(Class<? extends Event> eventClass) {
            this.eventClass = eventClass;
        }

        boolean on() {
            if (!FlightRecorder.isInitialized()) {
                return false;
            }
            EventType t = type;
            if (t == null) {
                t = EventType.getEventType(eventClass);
                type = t;
            }
            return t.isEnabled();
        }
    }
}

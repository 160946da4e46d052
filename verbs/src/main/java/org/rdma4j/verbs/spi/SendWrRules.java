// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WrOpcode;

/**
 * What {@code ibv_post_send} accepts on every device: which opcodes each QP type carries (UD only
 * SENDs; UC no READ, atomics or SEND_WITH_INV), the SGE and inline limits of the QP, the 2^31 - 1 byte
 * message limit, atomic alignment and length, and the parts a UD send or a BIND_MW must name. The
 * checks follow rxe's {@code validate_send_wr} and the kernel's {@code ib_post_send}. Stateless;
 * allocation free unless the request is refused. Thread safe.
 */
public final class SendWrRules {
    private SendWrRules() {}

    /**
     * Why a QP of {@code type} with {@code maxSendSge} SGEs and {@code maxInline} bytes of inline data
     * per WR refuses {@code w} (the caller's EINVAL message), or null when it accepts it.
     *
     * @param type       the QP type
     * @param w          the request (one, not its chain)
     * @param maxSendSge the QP's {@code max_send_sge}
     * @param maxInline  the QP's {@code max_inline_data}
     * @return null when accepted, else why not
     *
     * @throws IllegalStateException when the address handle of a UD request is closed (a use after
     *     close in the caller, not a malformed request)
     */
    public static String check(QpType type, SendWorkRequest w, int maxSendSge, int maxInline) {
        WrOpcode op = w.opcode();
        if (op == null) {
            return "no opcode";
        }
        if (type == QpType.UD || type == QpType.UC) {
            String bad = checkTransport(type, w, op);
            if (bad != null) {
                return bad;
            }
        }
        if (w.numSge() > maxSendSge) {
            return "work request has " + w.numSge() + " SGEs, max_send_sge is " + maxSendSge;
        }
        long total = w.payloadLength();
        boolean inline = w.inlineData() != null || (w.sendFlags() & SendFlag.INLINE) != 0;
        if (inline && !(op.isSend() || op.isWrite())) {
            // as rxe's validate_send_wr ("opcode doesn't support inline data"): READ, atomics and the
            // local operations carry no payload to copy
            return "inline data needs a SEND or RDMA WRITE, not " + op;
        }
        if (total > Integer.toUnsignedLong(Integer.MAX_VALUE)) {
            return "message of " + total + " bytes exceeds max_msg_sz";
        }
        if (inline && total > maxInline) {
            return "inline data of " + total + " bytes exceeds max_inline_data " + maxInline;
        }
        if (op.isAtomic() || op == WrOpcode.BIND_MW) {
            return checkAtomicOrBind(w, op, total);
        }
        return null;
    }

    // check's rarer parts, apart so that check stays small enough for the JIT to inline into a post

    private static String checkTransport(QpType type, SendWorkRequest w, WrOpcode op) {
        if (type == QpType.UD) {
            if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                return op + " is not supported on a UD QP";
            }
            if (w.ah() == null) {
                return "UD send without an address handle";
            }
            if (w.ah().isClosed()) {
                throw new IllegalStateException("the address handle of UD work request " + w.wrId() + " is closed");
            }
        } else if (op == WrOpcode.RDMA_READ || op.isAtomic() || op == WrOpcode.SEND_WITH_INV) {
            return op + " is not supported on a UC QP";
        }
        return null;
    }

    private static String checkAtomicOrBind(SendWorkRequest w, WrOpcode op, long total) {
        if (op.isAtomic()) {
            if ((w.remoteAddr() & 7) != 0) {
                return "atomic remote address 0x" + Long.toHexString(w.remoteAddr()) + " is not 8-byte aligned";
            }
            if (total != 8) {
                return "atomic needs one 8-byte local buffer, got " + total + " bytes";
            }
        }
        if (op == WrOpcode.BIND_MW && (w.mw() == null || w.bindMr() == null && w.bindLength() != 0)) {
            return "BIND_MW without a window or a region";
        }
        return null;
    }
}

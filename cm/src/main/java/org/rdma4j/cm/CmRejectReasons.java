// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

/**
 * The names of the IB CM's REJ reasons (IBTA 12.6.7.2, table "REJ reason"; the kernel's
 * {@code enum ib_cm_rej_reason} uses the same numbers), for logs and flight-recorder events. Stateless.
 */
final class CmRejectReasons {
    private static final String[] NAMES = {null, "no QP available", "no EEC available", "no resources available",
        "timeout", "unsupported request", "invalid communication ID", "invalid communication instance",
        "invalid service ID (no listener)", "invalid transport service type", "stale connection",
        "RDC does not exist", "invalid GID", "invalid LID", "invalid SL", "invalid traffic class",
        "invalid hop limit", "invalid packet rate", "invalid alternate GID", "invalid alternate LID",
        "invalid alternate SL", "invalid alternate traffic class", "invalid alternate hop limit",
        "invalid alternate packet rate", "port CM redirect", "port redirect", "invalid path MTU",
        "insufficient responder resources", "consumer defined", "invalid RNR retry count",
        "duplicate local communication ID", "invalid class version", "invalid flow label",
        "invalid alternate flow label", null, "vendor option not supported"};

    private CmRejectReasons() {
    }

    /** {@return the reason's name, e.g. "consumer defined" for 28; "reason N" for one the table lacks} */
    static String name(int reason) {
        String n = reason > 0 && reason < NAMES.length ? NAMES[reason] : null;
        return n != null ? n : "reason " + reason;
    }
}

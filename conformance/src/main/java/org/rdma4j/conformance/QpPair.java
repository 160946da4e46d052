// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendWorkRequest;

/** Two queue pairs connected to each other: A on the device under test, B on the peer. */
public record QpPair(Endpoint a, Endpoint b, PairSpec spec) {
    public QpType type() {
        return spec.type;
    }

    /** For UD, addresses {@code wr} from A to B (AH, QPN, Q_Key); for RC/UC returns it unchanged. */
    public SendWorkRequest toB(SendWorkRequest wr) {
        if (spec.type == QpType.UD) {
            wr.ud(a.ahToPeer(), b.qpn(), spec.qkey);
        }
        return wr;
    }

    /** For UD, addresses {@code wr} from B to A. */
    public SendWorkRequest toA(SendWorkRequest wr) {
        if (spec.type == QpType.UD) {
            wr.ud(b.ahToPeer(), a.qpn(), spec.qkey);
        }
        return wr;
    }
}

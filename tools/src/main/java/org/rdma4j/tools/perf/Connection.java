// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import org.rdma4j.verbs.QpType;

/** perftest's -c values rdma4j runs (perftest also knows XRC, DC, SRD and RawEth: hardware-specific). */
enum Connection {
    RC(QpType.RC), UC(QpType.UC), UD(QpType.UD);

    private final QpType qpType;

    Connection(QpType qpType) {
        this.qpType = qpType;
    }

    QpType qpType() {
        return qpType;
    }
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QueuePair;

/**
 * One side of a connection built by {@link AbstractVerbsTest#connect}: its context, PD, CQs and QP,
 * the local GID it uses, and (UD only) an address handle to the other side.
 */
public record Endpoint(Context ctx, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                       QueuePair qp, int gidIndex, Gid gid, AddressHandle ahToPeer) {
    public int qpn() {
        return qp.qpn();
    }
}

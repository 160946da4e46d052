// SPDX-License-Identifier: Apache-2.0
/**
 * The conformance suites over queue pairs the connection manager connects: {@link
 * org.rdma4j.conformance.cm.CmQpConnector}, a {@link org.rdma4j.conformance.QpConnector} a setup offers
 * when its RC pairs must (iWARP) or should be connected by rdma_cm instead of modify_qp.
 */
module org.rdma4j.conformance.cm {
    requires transitive org.rdma4j.conformance;
    requires org.rdma4j.cm;
    exports org.rdma4j.conformance.cm;
}

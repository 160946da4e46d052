// SPDX-License-Identifier: Apache-2.0
/**
 * rdma4j's connection manager: rdma_cm's model (event channels, ids, resolve, listen, connect, accept)
 * over the IB CM protocol, spoken as MADs through a provider's {@link org.rdma4j.verbs.spi.GsiPort}.
 */
module org.rdma4j.cm {
    requires transitive org.rdma4j.verbs;
    requires jdk.jfr; // CmFlightEvents
    exports org.rdma4j.cm;
    exports org.rdma4j.cm.wire;
    provides org.rdma4j.verbs.spi.GsiResponder with org.rdma4j.cm.wire.UnclaimedResponder;
}

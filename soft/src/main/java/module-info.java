// SPDX-License-Identifier: Apache-2.0
/**
 * The soft device: a pure-Java RoCEv2 RDMA device. Its public face is {@code org.rdma4j.soft}
 * (SoftDevices, ResourceLimits, the provider); the engine, links and wire codecs are internal, and
 * devices with other links are made from device specs ({@code Verbs.createDevice("soft:udp?...")}).
 */
module org.rdma4j.soft {
    requires transitive org.rdma4j.verbs;
    requires jdk.jfr;
    exports org.rdma4j.soft;
    provides org.rdma4j.verbs.spi.VerbsProvider with org.rdma4j.soft.SoftProvider;
}

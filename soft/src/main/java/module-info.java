/** The soft device: a pure-Java RoCEv2 RDMA device. */
module org.rdma4j.soft {
    requires org.rdma4j.verbs;
    requires jdk.jfr;
    exports org.rdma4j.soft;
    exports org.rdma4j.soft.wire;
    exports org.rdma4j.soft.link;
    provides org.rdma4j.verbs.spi.VerbsProvider with org.rdma4j.soft.SoftProvider;
}

/** The rdma4j verbs API: one API for every RDMA provider. */
module org.rdma4j.verbs {
    exports org.rdma4j.verbs;
    exports org.rdma4j.verbs.spi;
    uses org.rdma4j.verbs.spi.VerbsProvider;
}

// SPDX-License-Identifier: Apache-2.0
/** The rdma4j verbs API: one API for every RDMA provider. */
@SuppressWarnings("module") // the qualified export names provider modules this one cannot see
module org.rdma4j.verbs {
    requires java.management; // PortCountersJmx.register
    exports org.rdma4j.verbs;
    exports org.rdma4j.verbs.spi;
    // FFM plumbing (library lookup, errno capture): it makes downcalls with this module's native access,
    // so only this project's providers may use it; a new native provider adds its module here.
    exports org.rdma4j.verbs.spi.ffm to org.rdma4j.soft, org.rdma4j.nativeverbs;
    uses org.rdma4j.verbs.spi.VerbsProvider;
    uses org.rdma4j.verbs.spi.GsiResponder;
}

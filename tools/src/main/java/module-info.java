/**
 * The {@code rdma4j} command: devices, devinfo and the demo tour, in the layout of the rdma-core
 * tools where there is one.
 */
module org.rdma4j.tools {
    requires org.rdma4j.verbs;
    // Not used by name: requiring it puts the embedded soft device (soft0) in every run.
    requires org.rdma4j.soft;
    requires info.picocli;

    // picocli fills the annotated command fields reflectively.
    opens org.rdma4j.tools to info.picocli;
}

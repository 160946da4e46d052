/**
 * The {@code rdma4j} command: devices, devinfo, the demo tour and the chaos run, in the layout of the
 * rdma-core tools where there is one.
 */
module org.rdma4j.tools {
    requires org.rdma4j.verbs;
    // Puts the embedded soft device (soft0) in every run; stress also uses its StressWorkload.
    requires org.rdma4j.soft;
    requires info.picocli;

    // picocli fills the annotated command fields reflectively.
    opens org.rdma4j.tools to info.picocli;
    opens org.rdma4j.tools.pingpong to info.picocli;
}

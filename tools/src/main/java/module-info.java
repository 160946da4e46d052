/**
 * The {@code rdma4j} command: devices, devinfo, the demo tour and the chaos run, in the layout of the
 * rdma-core tools where there is one.
 */
module org.rdma4j.tools {
    // Only the verbs API: providers (the soft device with its embedded soft0, later native) are found
    // at run time with ServiceLoader, and --bind devices are created from a provider-neutral spec.
    requires org.rdma4j.verbs;
    requires info.picocli;
    // rdma4j perf: latency percentiles (an automatic module named after its jar) and PNG charts
    requires HdrHistogram;
    requires org.jfree.jfreechart;
    requires java.desktop;

    // picocli fills the annotated command fields reflectively.
    opens org.rdma4j.tools to info.picocli;
    opens org.rdma4j.tools.device to info.picocli;
    opens org.rdma4j.tools.pingpong to info.picocli;
    opens org.rdma4j.tools.perf to info.picocli;
}

// SPDX-License-Identifier: Apache-2.0
/**
 * The {@code rdma4j} command: devices, devinfo, the demo tour and the chaos run, in the layout of the
 * rdma-core tools where there is one.
 */
module org.rdma4j.tools {
    // Only the verbs API: providers (the soft device with its embedded soft0, later native) are found
    // at run time with ServiceLoader, and --bind devices are created from a provider-neutral spec.
    requires org.rdma4j.verbs;
    // rping: connections through rdma4j's connection manager
    requires org.rdma4j.cm;
    // study pingpong --examples: the example programs (examples/) measured as they are
    requires org.rdma4j.examples;
    requires info.picocli;
    // --plot: JFreeChart (an automatic module) draws with AWT, headless
    requires java.desktop;
    requires org.jfree.jfreechart;
    // study pingpong: per-thread and process CPU time
    requires java.management;
    // rdma4j perf: latency percentiles (HdrHistogram, an automatic module named after its jar) and the
    // per-thread allocation counter (the data path's allocation check)
    requires HdrHistogram;
    requires jdk.management;

    // picocli fills the annotated command fields reflectively.
    opens org.rdma4j.tools to info.picocli;
    opens org.rdma4j.tools.cli to info.picocli;
    opens org.rdma4j.tools.device to info.picocli;
    opens org.rdma4j.tools.pingpong to info.picocli;
    opens org.rdma4j.tools.study to info.picocli;
    opens org.rdma4j.tools.perf to info.picocli;
    opens org.rdma4j.tools.rping to info.picocli;
    opens org.rdma4j.tools.mckey to info.picocli;
    opens org.rdma4j.tools.cmutils to info.picocli;
}

/**
 * The provider-agnostic conformance suite: JUnit 5 abstract test classes, one concrete subclass per
 * provider (see {@link org.rdma4j.conformance.AbstractVerbsTest}). The contract is
 * shared/reference/SEMANTICS.md.
 */
module org.rdma4j.conformance {
    // transitive: the abstract classes expose Context, QueuePair... and JUnit annotations to subclasses
    requires transitive org.rdma4j.verbs;
    requires transitive org.junit.jupiter.api;
    requires org.junit.jupiter.params;
    exports org.rdma4j.conformance;
    opens org.rdma4j.conformance;
}

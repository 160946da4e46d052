// SPDX-License-Identifier: Apache-2.0
/**
 * The provider-agnostic conformance suites: JUnit 5 test classes that run once per setup a
 * {@link org.rdma4j.conformance.SetupProvider} offers (see {@link org.rdma4j.conformance.AbstractVerbsTest}).
 * The contract is docs/SEMANTICS.md.
 */
module org.rdma4j.conformance {
    // transitive: the abstract classes expose Context, QueuePair... and JUnit annotations to subclasses
    requires transitive org.rdma4j.verbs;
    requires transitive org.junit.jupiter.api;
    requires transitive org.junit.jupiter.params;
    exports org.rdma4j.conformance;
    opens org.rdma4j.conformance;
    uses org.rdma4j.conformance.SetupProvider;
}

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import java.util.List;

/**
 * Found through {@link java.util.ServiceLoader} on the test class path
 * ({@code META-INF/services/org.rdma4j.conformance.SetupProvider}): the setups a provider module runs
 * the conformance suites on. Adding a provider or a link is one entry here.
 */
public interface SetupProvider {
    /** The setups, in the order the suites run on them. */
    List<ConformanceSetup> setups();
}

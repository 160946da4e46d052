// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

/**
 * The engine's view of a protection domain: the identity that keys, QPs and address handles are
 * checked against (compared by reference; the engine needs nothing else of it). The soft device's
 * {@code ProtectionDomain} implements it.
 */
public interface Pd {
}

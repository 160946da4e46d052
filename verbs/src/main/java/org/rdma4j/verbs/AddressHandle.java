// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** An address handle ({@code struct ibv_ah}) for UD sends. Thread safe. */
public interface AddressHandle extends VerbsResource {
    ProtectionDomain pd();

    AhAttr attr();
}

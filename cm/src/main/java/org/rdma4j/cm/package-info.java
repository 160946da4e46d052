// SPDX-License-Identifier: Apache-2.0
/**
 * rdma_cm's model in Java: {@link org.rdma4j.cm.CmEventChannel}, {@link org.rdma4j.cm.CmId} and its
 * events, over the IB CM protocol spoken through a provider's {@link org.rdma4j.verbs.spi.GsiPort}.
 */
package org.rdma4j.cm;

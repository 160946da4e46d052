// SPDX-License-Identifier: Apache-2.0
/**
 * Flyweight codecs of the IB CM messages (MADs of class 0x07) and of rdma_cm's IP private-data header,
 * over {@link java.lang.foreign.MemorySegment}; every field at the offset IBTA vol. 1 chapter 12 gives it.
 */
package org.rdma4j.cm.wire;

// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

/**
 * What the client side of one {@code study latency} method measured: each timed round trip in ns, and
 * the retransmissions the devices counted over the run (-1 for sockets, or a device without the
 * {@code retransmits} counter). On a lossless link every retransmission is a timer that fired on a
 * packet that was only late.
 */
record Measured(long[] rttNs, long retransmits) {}

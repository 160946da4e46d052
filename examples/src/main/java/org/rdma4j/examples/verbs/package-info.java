// SPDX-License-Identifier: Apache-2.0
/**
 * Raw-verbs example programs on the public verbs API ({@code org.rdma4j.verbs}) alone, each a
 * {@code main} that runs both ends in one process: {@link org.rdma4j.examples.verbs.UdPingPong} (UD
 * QPs, address handles, the GRH, Q_Keys), {@link org.rdma4j.examples.verbs.AtomicCounter}
 * (FETCH_AND_ADD and a COMPARE_AND_SWAP lock) and {@link org.rdma4j.examples.verbs.SharedReceiveQueue}
 * (one SRQ for several senders, its limit event). {@code -d DEVICE} chooses the device (default
 * {@code soft0}); a second {@code -d} puts the other end on another device.
 */
package org.rdma4j.examples.verbs;

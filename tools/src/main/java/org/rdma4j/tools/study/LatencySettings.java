// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

/**
 * What both sides of a {@code study latency} run agree on: message size, timed and warm-up round trips,
 * and the port and GID index of the RDMA device ({@code gidIndex} -1: the device's default).
 */
record LatencySettings(int size, int iters, int warmup, int ibPort, int gidIndex) {}

// SPDX-License-Identifier: Apache-2.0
/**
 * rdma4j's example programs: the four ping-pongs of Robert D. Russell's "Introduction to RDMA
 * Programming", written against rdma4j's connection manager as the originals are against rdma_cm; and
 * raw-verbs programs ({@code org.rdma4j.examples.verbs}: UD with address handles, atomics, a shared
 * receive queue) on the public verbs API alone.
 */
module org.rdma4j.examples {
    requires org.rdma4j.cm;
    exports org.rdma4j.examples.pingpong;
}

// SPDX-License-Identifier: Apache-2.0
/**
 * Flyweight codecs of the IB CM messages and of rdma_cm's IP private-data header, over
 * {@link java.lang.foreign.MemorySegment}: what {@link org.rdma4j.cm.CmId} sends and receives on QP1.
 *
 * <p>Every CM message is a 256-byte MAD of management class 0x07 (CM, class version 2) with a 24-byte
 * common MAD header ({@link org.rdma4j.cm.wire.MadHeader}); its attribute id says which message follows.
 * Each class here wraps one message, and its {@code *_OFFSET} constants are the byte offsets of the
 * fields in the MAD (the offsets of IBTA vol. 1 chapter 12's message tables plus the 24-byte header), so
 * they can be checked against the specification directly; each accessor pair reads and writes the field
 * of the IBTA name its javadoc gives, in network byte order:
 * <table class="striped">
 * <caption>The messages</caption>
 * <thead><tr><th>Class</th><th>IBTA message</th><th>Attribute id</th><th>Kernel (cm.c)</th></tr></thead>
 * <tbody>
 * <tr><td>{@link org.rdma4j.cm.wire.CmReq}</td><td>ConnectRequest (REQ)</td><td>0x0010</td><td>{@code struct cm_req_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.CmMra}</td><td>MessageReceiptAcknowledgement (MRA)</td><td>0x0011</td><td>{@code struct cm_mra_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.CmRej}</td><td>ConnectReject (REJ)</td><td>0x0012</td><td>{@code struct cm_rej_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.CmRep}</td><td>ConnectReply (REP)</td><td>0x0013</td><td>{@code struct cm_rep_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.CmRtu}</td><td>ReadyToUse (RTU)</td><td>0x0014</td><td>{@code struct cm_rtu_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.CmDreq}</td><td>DisconnectRequest (DREQ)</td><td>0x0015</td><td>{@code struct cm_dreq_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.CmDrep}</td><td>DisconnectReply (DREP)</td><td>0x0016</td><td>{@code struct cm_drep_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.SidrReq}</td><td>ServiceIDResolutionRequest (SIDR_REQ)</td><td>0x0017</td><td>{@code struct cm_sidr_req_msg}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.wire.SidrRep}</td><td>ServiceIDResolutionResponse (SIDR_REP)</td><td>0x0018</td><td>{@code struct cm_sidr_rep_msg}</td></tr>
 * </tbody>
 * </table>
 * LAP and APR (alternate paths) are not offered. {@link org.rdma4j.cm.wire.CmaHeader} is rdma_cm's
 * {@code struct cma_hdr} at the start of a REQ's or SIDR_REQ's private data (the IP addresses and port
 * of an rdma_cm connection, IBTA annex A11); {@link org.rdma4j.cm.wire.ServiceId} is rdma_cm's service id
 * layout (port space and port); {@link org.rdma4j.cm.wire.MadCheck} says whether a received MAD is a
 * well-formed CM message before any field of it is trusted.
 *
 * <p>Errors: the codecs do not validate values against the peer (that is {@link org.rdma4j.cm.CmId}'s
 * job); {@code wrap} throws {@link java.lang.IllegalArgumentException} for a segment shorter than a MAD,
 * private-data accessors for a length beyond the field, and the segment's own access checks apply (a
 * closed arena's segment throws {@link java.lang.IllegalStateException}).
 *
 * <p>Threads and lifetimes: a flyweight holds no memory of its own, only the segment it was last
 * wrapped around, which must stay alive while it is used; flyweights are not thread safe (one per
 * thread, or one per owner under a lock, as the connection manager keeps them). The static codecs
 * ({@code MadHeader}, {@code CmaHeader}, {@code ServiceId}, {@code MadCheck}) are stateless and thread safe.
 */
package org.rdma4j.cm.wire;

package org.rdma4j.soft.engine;

/**
 * A responder resource (one of max_dest_rd_atomic): what a READ or atomic request did, so that a
 * duplicate can be answered without executing it twice.
 */
final class Resource {
    boolean valid;
    boolean atomic;
    int firstPsn;
    int lastPsn;
    long originalValue;
    /** A READ's request (rkey, address, length): a duplicate must ask for the same or a part of it. */
    int rkey;
    long va;
    long length;
}

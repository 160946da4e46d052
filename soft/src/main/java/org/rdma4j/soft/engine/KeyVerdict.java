// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

/**
 * What {@link MemKey#check} found: {@link #OK}, or the first rule the key breaks. Each caller maps
 * a refusal to what its C counterpart reports (LOC_PROT_ERR, a REMOTE_ACCESS NAK, MW_BIND_ERR, ...).
 */
public enum KeyVerdict {
    OK,
    /** No key by that number (or its variant is stale). */
    NO_KEY,
    /** Deregistered, invalidated, or a window not bound. */
    INVALID,
    /** The key belongs to another protection domain. */
    WRONG_PD,
    /** The wrong kind of key for the use: a window as an lkey, anything but a type-2 window to invalidate. */
    WRONG_KIND,
    /** The key does not grant the access asked for. */
    NO_ACCESS,
    /** The range lies (partly) outside the key's. */
    OUT_OF_RANGE,
    /** The memory behind the key has been freed (its arena closed). */
    FREED,
    /** A type-2 window used through a QP other than the one it was bound through. */
    WRONG_QP
}

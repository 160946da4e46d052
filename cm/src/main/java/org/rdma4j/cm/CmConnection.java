// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

/**
 * The protocol state of one connection of a {@link CmId}, as cm.c keeps it in its cm_id_private apart
 * from rdma_cm's id: the communication IDs and transaction id, the CA GUIDs, the QPNs and starting PSNs
 * of both sides, the path MTU and the values the REQ and REP agreed (resources, depth, retry counts,
 * the peer's timeouts), and what the MAD layer keeps for retransmission (the last MAD, retries left,
 * the timer generation, the flow slot). Guarded by the engine's lock.
 */
final class CmConnection {
    int localCommId;
    int remoteCommId;
    long caGuid;
    long remoteCaGuid;
    long tid;
    int remoteQpn;
    int remotePsn;
    int localPsn;
    int localQpn;
    int pathMtu;
    int responderResources;
    int initiatorDepth;
    int retryCount;
    int rnrRetryCount;
    int remoteAckTimeout;
    int peerResponseTimeout;
    int peerMaxCmRetries;
    byte[] lastMad;
    int retriesLeft;
    long timerGen;
    /** The request in lastMad holds one of its agent's flow slots to dgid / waits for one (CmEngine.sendRequest). */
    boolean holdsSlot;
    boolean deferred;
    long requestDelayNs;
}

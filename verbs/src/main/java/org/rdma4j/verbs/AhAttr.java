package org.rdma4j.verbs;

/**
 * An address vector ({@code struct ibv_ah_attr}). On RoCE ({@link LinkLayer#ETHERNET}) a
 * {@link GlobalRoute} is required: without one, creating an address handle or moving a connected
 * QP to RTR fails with EINVAL.
 */
public record AhAttr(GlobalRoute grh, int dlid, int sl, int srcPathBits, int staticRate, int portNum) {
    /** True when a GRH is present ({@code is_global}). */
    public boolean isGlobal() {
        return grh != null;
    }

    /** A RoCE address vector to {@code dgid} through port 1, local GID index {@code sgidIndex}. */
    public static AhAttr roce(Gid dgid, int sgidIndex) {
        return new AhAttr(GlobalRoute.to(dgid, sgidIndex), 0, 0, 0, 0, 1);
    }
}

package org.rdma4j.nativeverbs.abi;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds {@link StructLayout}s the way a C compiler of the LP64 Linux ABI lays structs out: each member
 * at the next offset that meets its natural alignment, the struct's size rounded up to its largest
 * alignment. Member names are the C member names, so {@code LayoutProbeTest} can compare every
 * offset with {@code offsetof} on the installed header. Stateless; thread safe.
 */
public final class CStructs {
    /** {@code uint8_t}, {@code uint16_t}, {@code uint32_t}/{@code int}/an enum, {@code uint64_t}, a pointer. */
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    public static final AddressLayout PTR = ValueLayout.ADDRESS;

    private static final boolean AARCH64 = "aarch64".equals(System.getProperty("os.arch"));

    private CStructs() {}

    /** {@code struct name { members }} with the padding C inserts. */
    public static StructLayout struct(String name, MemoryLayout... members) {
        StructLayout s = anonymous(members);
        return name == null ? s : s.withName(name);
    }

    /** A struct member of a struct or union without a tag of its own (give it a member name with {@code withName}). */
    public static StructLayout anonymous(MemoryLayout... members) {
        List<MemoryLayout> out = new ArrayList<>();
        long offset = 0;
        long align = 1;
        int pad = 0;
        for (MemoryLayout m : members) {
            long a = m.byteAlignment();
            align = Math.max(align, a);
            long at = (offset + a - 1) / a * a;
            if (at > offset) {
                out.add(MemoryLayout.paddingLayout(at - offset).withName("$pad" + pad++));
            }
            out.add(m);
            offset = at + m.byteSize();
        }
        long size = (offset + align - 1) / align * align;
        if (size > offset) {
            out.add(MemoryLayout.paddingLayout(size - offset).withName("$pad" + pad));
        }
        return MemoryLayout.structLayout(out.toArray(MemoryLayout[]::new));
    }

    /** {@code union { members }}, sized to its largest member rounded up to its alignment. */
    public static UnionLayout union(MemoryLayout... members) {
        long size = 0;
        long align = 1;
        for (MemoryLayout m : members) {
            size = Math.max(size, m.byteSize());
            align = Math.max(align, m.byteAlignment());
        }
        long padded = (size + align - 1) / align * align;
        if (padded == size) {
            return MemoryLayout.unionLayout(members);
        }
        MemoryLayout[] all = java.util.Arrays.copyOf(members, members.length + 1);
        all[members.length] = MemoryLayout.paddingLayout(padded);
        return MemoryLayout.unionLayout(all);
    }

    /** An array member {@code type name[count]}. */
    public static MemoryLayout array(String name, long count, MemoryLayout element) {
        return MemoryLayout.sequenceLayout(count, element).withName(name);
    }

    /** glibc's {@code pthread_mutex_t}: opaque, 40 bytes on x86-64 and 48 on aarch64, 8-byte aligned. */
    public static MemoryLayout pthreadMutex(String name) {
        return MemoryLayout.sequenceLayout(AARCH64 ? 6 : 5, U64).withName(name);
    }

    /** glibc's {@code pthread_cond_t}: opaque, 48 bytes, 8-byte aligned. */
    public static MemoryLayout pthreadCond(String name) {
        return MemoryLayout.sequenceLayout(6, U64).withName(name);
    }

    /**
     * The byte offset of a member path as C names it: dots for nested members ({@code "wr.rdma.rkey"}),
     * members of anonymous unions and structs reached as members of their parent ({@code "imm_data"}).
     *
     * @throws IllegalArgumentException if no member has that path
     */
    public static long offset(MemoryLayout layout, String path) {
        long total = 0;
        MemoryLayout current = layout;
        for (String part : path.split("\\.")) {
            long[] at = new long[1];
            MemoryLayout found = find(current, part, at);
            if (found == null) {
                throw new IllegalArgumentException("no member " + part + " in " + layout.name().orElse("struct")
                        + " (path " + path + ")");
            }
            total += at[0];
            current = found;
        }
        return total;
    }

    /** The member named {@code name} of {@code group}, looking into anonymous members; its offset in {@code at[0]}. */
    private static MemoryLayout find(MemoryLayout group, String name, long[] at) {
        if (!(group instanceof java.lang.foreign.GroupLayout g)) {
            return null;
        }
        long offset = 0;
        for (MemoryLayout m : g.memberLayouts()) {
            long here = g instanceof UnionLayout ? 0 : offset;
            if (name.equals(m.name().orElse(null))) {
                at[0] = here;
                return m;
            }
            if (m.name().isEmpty() && m instanceof java.lang.foreign.GroupLayout) {
                MemoryLayout inner = find(m, name, at);
                if (inner != null) {
                    at[0] += here;
                    return inner;
                }
            }
            offset += m.byteSize();
        }
        return null;
    }
}

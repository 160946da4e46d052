// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds C struct and union layouts the way the C compiler lays them out on LP64 Linux: members in
 * order, each at the next offset aligned for it, the whole padded to its largest alignment. The
 * padding is inserted here (and never checked by the probe); the offsets that result are what the
 * layout probe compares with offsetof.
 */
public final class CLayout {
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout PTR = ValueLayout.ADDRESS;

    private CLayout() {}

    /** A struct with C's padding; the result is named {@code name} (null for an anonymous member). */
    public static StructLayout struct(String name, MemoryLayout... members) {
        List<MemoryLayout> all = new ArrayList<>();
        long offset = 0;
        long align = 1;
        for (MemoryLayout m : members) {
            long a = m.byteAlignment();
            align = Math.max(align, a);
            long pad = (a - offset % a) % a;
            if (pad != 0) {
                all.add(MemoryLayout.paddingLayout(pad));
                offset += pad;
            }
            all.add(m);
            offset += m.byteSize();
        }
        long tail = (align - offset % align) % align;
        if (tail != 0) {
            all.add(MemoryLayout.paddingLayout(tail));
        }
        StructLayout s = MemoryLayout.structLayout(all.toArray(MemoryLayout[]::new));
        return name == null ? s : s.withName(name);
    }

    /** A union padded to a multiple of its alignment; named {@code name} (null for an anonymous member). */
    public static UnionLayout union(String name, MemoryLayout... members) {
        long size = 0;
        long align = 1;
        for (MemoryLayout m : members) {
            size = Math.max(size, m.byteSize());
            align = Math.max(align, m.byteAlignment());
        }
        List<MemoryLayout> all = new ArrayList<>(List.of(members));
        long padded = (size + align - 1) / align * align;
        if (padded != size) {
            all.add(MemoryLayout.paddingLayout(padded));
        }
        UnionLayout u = MemoryLayout.unionLayout(all.toArray(MemoryLayout[]::new));
        return name == null ? u : u.withName(name);
    }

    /** A named C array of {@code n} elements. */
    public static MemoryLayout array(String name, long n, MemoryLayout element) {
        return MemoryLayout.sequenceLayout(n, element).withName(name);
    }

    /** A C member: {@code layout} named {@code name}. */
    public static MemoryLayout m(String name, MemoryLayout layout) {
        return layout.withName(name);
    }

    /** A nested group layout used as the member {@code name}. */
    public static GroupLayout member(String name, GroupLayout layout) {
        return layout.withName(name);
    }

    /**
     * The byte offset of a member path such as {@code "ops.alloc_mw"} or {@code "bind_info.addr"}, as C
     * spells it: a member of an anonymous (unnamed) union or struct is found as a member of its parent.
     *
     * @throws IllegalArgumentException if there is no such member
     */
    public static long offset(MemoryLayout layout, String path) {
        long off = 0;
        MemoryLayout current = layout;
        for (String part : path.split("\\.")) {
            if (!(current instanceof GroupLayout g)) {
                throw new IllegalArgumentException(path + ": " + current + " has no members");
            }
            long[] found = new long[1];
            MemoryLayout m = find(g, part, 0, found);
            if (m == null) {
                throw new IllegalArgumentException("no member " + part + " in " + g.name().orElse("?") + " (" + path + ")");
            }
            off += found[0];
            current = m;
        }
        return off;
    }

    /** The member {@code name} of {@code g}, looking into unnamed groups; its offset from g in {@code at[0]}. */
    private static MemoryLayout find(GroupLayout g, String name, long base, long[] at) {
        long off = 0;
        for (MemoryLayout m : g.memberLayouts()) {
            if (m.name().isPresent() && m.name().get().equals(name)) {
                at[0] = base + off;
                return m;
            }
            if (m.name().isEmpty() && m instanceof GroupLayout inner) {
                MemoryLayout r = find(inner, name, base + off, at);
                if (r != null) {
                    return r;
                }
            }
            if (g instanceof StructLayout) {
                off += m.byteSize();
            }
        }
        return null;
    }
}

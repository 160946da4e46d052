// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import java.lang.foreign.GroupLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * The registry the layout probe (LayoutProbeTest) checks against the installed verbs.h and rdma_cma.h: every struct or
 * union layout of the binding and every class of C constants. A layout class lists its layouts as
 * {@code public static final} fields of a {@link GroupLayout} type; {@link #ALL} collects them from
 * {@link #LAYOUT_CLASSES}, so a new layout cannot be forgotten by the probe.
 */
public final class Layouts {
    /** Classes whose public static final GroupLayout fields are struct (or union) layouts named with their C tag. */
    public static final List<Class<?>> LAYOUT_CLASSES = List.of(DeviceLayouts.class, QpLayouts.class, CmLayouts.class);

    /** Classes whose public static final int/long fields are C constants named exactly as in C. */
    public static final List<Class<?>> CONSTANT_CLASSES = List.of(DeviceConstants.class, QpConstants.class, CmConstants.class);

    /** Every struct or union layout, from {@link #LAYOUT_CLASSES}. */
    public static final List<GroupLayout> ALL = collect();

    private Layouts() {}

    private static List<GroupLayout> collect() {
        List<GroupLayout> all = new ArrayList<>();
        for (Class<?> c : LAYOUT_CLASSES) {
            for (Field f : c.getFields()) {
                if (Modifier.isStatic(f.getModifiers()) && GroupLayout.class.isAssignableFrom(f.getType())) {
                    try {
                        all.add((GroupLayout) f.get(null));
                    } catch (IllegalAccessException e) {
                        throw new AssertionError(e);
                    }
                }
            }
        }
        return List.copyOf(all);
    }
}

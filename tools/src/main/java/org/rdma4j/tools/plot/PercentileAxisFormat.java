// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.plot;

import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.Locale;

/** 1 -> "0%", 10 -> "90%", 100 -> "99%", 1000 -> "99.9%": the percentile whose 1/(1-q) is the value. */
public final class PercentileAxisFormat extends NumberFormat {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    @Override
    public StringBuffer format(double v, StringBuffer to, FieldPosition pos) {
        if (!(v >= 1)) {
            return to;
        }
        int nines = (int) Math.round(Math.log10(v));
        if (Math.abs(Math.log10(v) - nines) > 1e-6) {
            return to.append(String.format(Locale.ROOT, "%.4g%%", 100 * (1 - 1 / v)));
        }
        return to.append(switch (nines) {
            case 0 -> "0%";
            case 1 -> "90%";
            case 2 -> "99%";
            default -> "99." + "9".repeat(nines - 2) + "%";
        });
    }

    @Override
    public StringBuffer format(long v, StringBuffer to, FieldPosition pos) {
        return format((double) v, to, pos);
    }

    @Override
    public Number parse(String source, ParsePosition pos) {
        return null;
    }
}

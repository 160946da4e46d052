// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.plot;

import java.io.Serial;
import java.text.DecimalFormat;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.Locale;

/**
 * Tick labels for logarithmic axes: 1k, 10M, 1G instead of 1.0E3 (decimal prefixes, so 1M is 10^6),
 * plain decimals below 1000. Formatting only; not thread-safe, like every {@link NumberFormat}.
 */
public final class CompactFormat extends NumberFormat {

    @Serial
    private static final long serialVersionUID = 1L;

    private static final String[] PREFIXES = {"", "k", "M", "G", "T", "P"};
    private final DecimalFormat plain = new DecimalFormat("0.###",
            java.text.DecimalFormatSymbols.getInstance(Locale.ROOT));

    @Override
    public StringBuffer format(double number, StringBuffer to, FieldPosition pos) {
        double v = Math.abs(number);
        int p = 0;
        while (v >= 1000 && p < PREFIXES.length - 1) {
            v /= 1000;
            p++;
        }
        if (number < 0) {
            to.append('-');
        }
        return to.append(plain.format(v)).append(PREFIXES[p]);
    }

    @Override
    public StringBuffer format(long number, StringBuffer to, FieldPosition pos) {
        return format((double) number, to, pos);
    }

    @Override
    public Number parse(String source, ParsePosition pos) {
        throw new UnsupportedOperationException("tick labels are never parsed");
    }
}
